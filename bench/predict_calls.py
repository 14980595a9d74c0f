#!/usr/bin/env python3
"""Where a prediction's communication differs from the real run's, function by function.

For one example at 2 ranks: one recording, every rank replayed from it (`encore replay -o`),
`encore predict --model loggps` (or --model) with those profiles written out as a predicted
trace; and --runs plain runs with the bench_call_probe preload (every MPI call's entry and exit).
Per rank and MPI function it prints the time spent inside the calls, summed over the run:
  plain      the plain runs' (median over runs, [min .. max]);
  recorded   the capture's (corrected durations, `encore export --to chrome`);
  predicted  the predicted trace's (the model's start to end, its waits included);
and the call counts (a polling loop's count is timing, so they differ between runs). A function
whose predicted time is far from the plain one is where the model or its fit is off; the compute
between the calls is predict_segments.py's business. With --captured the prediction uses the
captured compute (no replays), which takes replay noise out. With --baseline OLD_BUILD, that
build's predict of the same recording and replays gives the `base` column.
Runs alternate behind benchlib's quiet gate, as in predict_accuracy.py. Not a test.
Usage: bench/predict_calls.py --build build [--example collectives] [--args '1048576']
       [--runs 5] [--model loggps] [--captured] [--baseline OLD_BUILD] [--keep DIR]
With --keep DIR the recording (DIR/trace) and the profiles (DIR/profile-R) stay, for predicting
again from them."""
import argparse
import collections
import json
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from benchlib import EXAMPLE_ARGS, PageReportingOff, QuietGate  # noqa: E402
from benchlib import add_page_reporting_flag  # noqa: E402
from predict_accuracy import run  # noqa: E402


def plain_calls(cmd, probe, tmp):
    """{rank: {function: (count, ns inside)}} and the span (ns) of one plain run."""
    out = pathlib.Path(tempfile.mkdtemp(dir=tmp))
    run(cmd, env={**os.environ, "LD_PRELOAD": str(probe), "ENCORE_CALLS_DIR": str(out),
                  "ENCORE_SPAN_DIR": str(out)})
    per_rank, spans = {}, []
    for f in sorted(out.glob("rank-*.calls")):
        rank = int(f.stem.split("-")[1])
        lines = f.read_text().splitlines()
        if "truncated" in lines:
            raise SystemExit("bench_call_probe ran out of room: set ENCORE_CALLS_MAX")
        sums = collections.defaultdict(lambda: [0, 0])
        for line in lines:
            name, enter, left, *_ = line.split()
            if name in ("MPI_Init", "MPI_Finalize", "MPI_Init_thread"):
                continue
            sums[name[4:]][0] += 1
            sums[name[4:]][1] += int(left) - int(enter)
        per_rank[rank] = dict(sums)
    for f in out.glob("rank-*.txt"):
        spans.append(tuple(map(int, f.read_text().split())))
    shutil.rmtree(out)
    span = max(e for _, e in spans) - min(s for s, _ in spans)
    return per_rank, span


def trace_calls(tool, trace, tmp):
    """{rank: {function: (count, ns inside)}} of a trace (recorded or predicted)."""
    out = tmp / "export.json"
    run([tool, "export", "--to", "chrome", trace, out])
    doc = json.loads(out.read_text())
    out.unlink()
    per_rank = collections.defaultdict(lambda: collections.defaultdict(lambda: [0, 0]))
    for e in doc["traceEvents"]:
        if e.get("ph") != "X" or e["name"] == "compute":
            continue
        name = e["name"][4:] if e["name"].startswith("MPI_") else e["name"]
        if name in ("Init", "Finalize", "Init_thread"):
            continue
        row = per_rank[e["pid"]][name]
        row[0] += 1
        row[1] += round(float(e["dur"]) * 1000)
    return per_rank


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--example", default="collectives")
    ap.add_argument("--args", default=None)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--model", default="loggps")
    ap.add_argument("--captured", action="store_true",
                    help="predict with the captured compute (no replays)")
    ap.add_argument("--quiet-wait", type=float, default=20.0)
    ap.add_argument("--baseline", help="another build whose predict gives the `base` column")
    ap.add_argument("--keep", help="keep the recording and the profiles in this directory")
    add_page_reporting_flag(ap)
    a = ap.parse_args()
    with PageReportingOff(keep=a.keep_page_reporting):
        return measure(a)


def measure(a):
    """The benchmark itself, which main() runs with free page reporting off."""
    build = pathlib.Path(a.build).resolve()
    tool = build / "tools/encore/encore"
    probe = build / "bench/libbench_call_probe.so"
    if not probe.exists():
        raise SystemExit(f"{probe}: not built (cmake --build {a.build} --target bench_call_probe)")
    args = (a.args if a.args is not None else EXAMPLE_ARGS.get(a.example, "")).split()
    program = [build / "examples" / f"example_{a.example}", *args]
    mpiexec = [shutil.which("mpiexec"), "-bind-to", "core", "-n", 2]
    gate = QuietGate(max_wait=a.quiet_wait)
    tmp = pathlib.Path(a.keep) if a.keep else pathlib.Path(tempfile.mkdtemp(prefix="predict-calls-"))
    tmp.mkdir(parents=True, exist_ok=True)
    try:
        trace = tmp / "trace"
        plains, spans = [], []
        gate.wait()
        p, s = plain_calls([*mpiexec, *program], probe, tmp)
        plains.append(p)
        spans.append(s)
        gate.wait()
        run([tool, "record", "-o", trace, "--", *mpiexec, *program])
        profiles = []
        if not a.captured:
            for r in (0, 1):
                gate.wait()
                prof = tmp / f"profile-{r}"
                run([tool, "replay", "--rank", r, trace, "-o", prof, "--", *program])
                profiles.append(prof)
        for _ in range(a.runs - 1):
            gate.wait()
            p, s = plain_calls([*mpiexec, *program], probe, tmp)
            plains.append(p)
            spans.append(s)
        def predicted_calls(predict_tool, out):
            cmd = [predict_tool, "predict", trace, "--json", "--model", a.model, "-o", out]
            if profiles:
                cmd += ["--replay", *profiles]
            return json.loads(run(cmd).stdout), trace_calls(tool, out, tmp)

        doc, pred = predicted_calls(tool, tmp / "predicted")
        base = (predicted_calls(pathlib.Path(a.baseline).resolve() / "tools/encore/encore",
                                tmp / "predicted-base") if a.baseline else None)
        rec = trace_calls(tool, trace, tmp)
        print(f"{a.example} {' '.join(args)}: plain span {statistics.median(spans) / 1e6:.3f} ms "
              f"[{min(spans) / 1e6:.3f} .. {max(spans) / 1e6:.3f}], predicted "
              f"{doc['predicted_program_s'] * 1e3:.3f} ms ({a.model}, "
              f"{'captured compute' if a.captured else 'every rank replayed'})"
              + (f", base {base[0]['predicted_program_s'] * 1e3:.3f} ms" if base else ""))
        for rank in (0, 1):
            names = set(rec[rank]) | set(pred[rank])
            for pr in plains:
                names |= set(pr.get(rank, {}))
            base_head = f"{'base':>10}" if base else ""
            print(f"  rank {rank}: time inside the calls, ms (count plain / recorded / predicted)")
            print(f"    {'function':<22} {'plain':>9} {'[min .. max]':>20} {'recorded':>9} "
                  f"{'predicted':>9} {'pred-plain':>10}{base_head}  counts")
            rows = []
            for n in names:
                pl = [pr.get(rank, {}).get(n, (0, 0))[1] / 1e6 for pr in plains]
                cnt = [pr.get(rank, {}).get(n, (0, 0))[0] for pr in plains]
                rows.append((n, statistics.median(pl), min(pl), max(pl),
                             rec[rank].get(n, (0, 0))[1] / 1e6, pred[rank].get(n, (0, 0))[1] / 1e6,
                             int(statistics.median(cnt)), rec[rank].get(n, (0, 0))[0],
                             pred[rank].get(n, (0, 0))[0],
                             base[1][rank].get(n, (0, 0))[1] / 1e6 if base else None))
            for n, pl, lo, hi, re, pd, c0, c1, c2, b in sorted(rows,
                                                               key=lambda r: -abs(r[5] - r[1])):
                print(f"    {n:<22} {pl:9.3f} [{lo:8.3f} .. {hi:8.3f}] {re:9.3f} {pd:9.3f} "
                      f"{pd - pl:+10.3f}{f'{b:10.3f}' if base else ''}  {c0} / {c1} / {c2}")
        print(f"machine: {gate.summary()}")
    finally:
        if not a.keep:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
