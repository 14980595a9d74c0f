#!/usr/bin/env python3
"""The one-rank inference's own error: one rank replayed and the other inferred, against both
replayed, on the same recordings and replays (so neither plain runs nor the replays' noise
between runs move it).

For each example at 2 ranks and each of --runs recordings: record, replay both ranks
(`encore replay -o`), then `encore predict` with rank 0's profile only and with rank 1's only,
`--infer ratio` and `--infer aligned`, each as a percentage of the span predicted with both
profiles (the loggps model throughout). With --baseline BUILD, that build's `encore predict`
gives the same rows on the same recordings (`base ...`), for a before/after of the inference.
Prints per row the median [min .. max]. Not timed against plain runs: predict_accuracy.py does
that. Usage: bench/predict_inference.py --build build [--baseline OLD_BUILD] [--runs 5]
       [--examples halo2d,ring]"""
import argparse
import json
import pathlib
import statistics
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from benchlib import EXAMPLE_ARGS, PageReportingOff, add_page_reporting_flag  # noqa: E402
from predict_accuracy import run  # noqa: E402


def span(tool, trace, profiles, infer=None):
    args = [tool, "predict", trace, "--json", "--replay", *profiles]
    if infer:
        args += ["--infer", infer]
    return json.loads(run(args).stdout)["predicted_program_s"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--baseline", help="another build whose predict gives the `base` rows")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--examples", default="halo2d,ring,collectives,master_worker")
    add_page_reporting_flag(ap)
    a = ap.parse_args()
    with PageReportingOff(keep=a.keep_page_reporting):
        return measure(a)


def measure(a):
    """The benchmark itself, which main() runs with free page reporting off."""
    build = pathlib.Path(a.build).resolve()
    tool = build / "tools/encore/encore"
    tools = [("", tool)] + ([("base ", pathlib.Path(a.baseline).resolve() /
                              "tools/encore/encore")] if a.baseline else [])
    with tempfile.TemporaryDirectory() as tmp:
        for name in a.examples.split(","):
            program = [build / f"examples/example_{name}", *EXAMPLE_ARGS[name].split()]
            rows = {}
            for i in range(a.runs):
                trace = pathlib.Path(tmp) / f"{name}-{i}"
                run([tool, "record", "-o", trace, "--", "mpiexec", "-bind-to", "core", "-n", "2",
                     *program])
                profiles = [pathlib.Path(tmp) / f"{name}-{i}-p{r}" for r in (0, 1)]
                for r, p in enumerate(profiles):
                    run([tool, "replay", "--rank", r, "-o", p, trace, "--", *program])
                both = span(tool, trace, profiles)
                for tag, t in tools:
                    for infer in ("ratio", "aligned"):
                        for r in (0, 1):
                            key = f"{tag}r{r} replayed, {infer}"
                            rows.setdefault(key, []).append(
                                100 * (span(t, trace, [profiles[r]], infer) - both) / both)
            for key, v in rows.items():
                print(f"{name:13s} {key:26s} vs both replayed {statistics.median(v):+6.2f} % "
                      f"[{min(v):+.2f} .. {max(v):+.2f}]", flush=True)


if __name__ == "__main__":
    main()
