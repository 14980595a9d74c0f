#!/usr/bin/env python3
"""What recording the received bytes does to the compute the capture keeps.

  bench/capture_stretch.py [--build DIR] [--runs N] [--lib LIBENCORE_DUMP.so[,VAR=VALUE...] ...]
                           [--examples ring,halo2d,collectives,master_worker]
                           [--args 'ring=100 200000;halo2d=1024 400']

For each example and run, records it on 2 ranks (mpiexec -bind-to core, as
bench/predict_accuracy.py does) with each library given, once with --payload-ranks none and once
with every rank's payload, alternated, and prints per library:
  compute x   recorded compute (`encore stats`, all ranks) with payloads over without: how much
              the writer thread's work on the payload (sharing the rank's core, the caches, the
              page cache) stretches the compute the capture keeps; the goal is 1.00;
  overhead x  the corrected overhead the capture charged (all ranks), with payloads over without;
  wall        the recording's wall time (all ranks' sum of `wall`), with payloads.
Median [min .. max]. Before each recording the machine is given up to --quiet-wait s to be
quiet (benchlib.QuietGate); the last line counts those taken without. Timings move with the machine's state: compare libraries only within one
invocation (each round records with every library in turn).
"""
import argparse
import json
import pathlib
import shutil
import tempfile

from benchlib import (PageReportingOff, QuietGate, add_page_reporting_flag, example_args, fmt,
                      lib_env, run)

ROOT = pathlib.Path(__file__).resolve().parent.parent


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--build", default=str(ROOT / "build"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--examples", default="ring,halo2d")
    ap.add_argument("--args", default="", help="example arguments, e.g. 'ring=10 1000;halo2d=256 100'")
    ap.add_argument("--quiet-wait", type=float, default=10.0,
                    help="before each recording, wait up to this many seconds for the machine to "
                    "be quiet (others' un-niced work, steal)")
    ap.add_argument("--lib", action="append", help="a capture library (repeatable; default: the "
                    "build's), optionally with capture settings: LIB,ENCORE_COMPRESS=during; an "
                    "empty LIB is the build's")
    add_page_reporting_flag(ap)
    a = ap.parse_args()
    with PageReportingOff(keep=a.keep_page_reporting):
        return measure(a)


def measure(a):
    """The benchmark itself, which main() runs with free page reporting off."""
    libs = a.lib or [""]
    build = pathlib.Path(a.build)
    tool = build / "tools/encore/encore"
    ex_args = example_args(a.args)
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="encore-stretch-"))
    mpiexec = ["mpiexec", "-bind-to", "core", "-n", "2"]
    gate = QuietGate(max_wait=a.quiet_wait)
    noisy = 0

    def record(lib, program, payload):
        trace = tmp / "trace"
        shutil.rmtree(trace, ignore_errors=True)
        nonlocal noisy
        noisy += not gate.wait()
        run([str(tool), "record", "-o", str(trace), "--quiet", "--payload-ranks", payload, "--",
             *mpiexec, *program], lib_env(lib))
        ranks = json.loads(run([str(tool), "stats", str(trace), "--json"]))["ranks"]
        shutil.rmtree(trace, ignore_errors=True)
        return {k: sum(r[k] for r in ranks) for k in ("compute_ns", "overhead_ns", "wall_ns")}

    print(f"capture stretch: {a.runs} runs, 2 ranks bound to cores, median [min .. max]")
    for name in a.examples.split(","):
        program = [str(build / f"examples/example_{name}"), *ex_args[name].split()]
        res = {lib: {"x": [], "ox": [], "wall": [], "bare": [], "full": []} for lib in libs}
        for i in range(a.runs):
            for lib in libs:
                # Alternate which recording goes first, so a drift in the machine's state
                # does not always favour the same one.
                order = ("none", "all") if i % 2 == 0 else ("all", "none")
                got = {p: record(lib, program, p) for p in order}
                r = res[lib]
                r["x"].append(got["all"]["compute_ns"] / got["none"]["compute_ns"])
                r["ox"].append(got["all"]["overhead_ns"] / max(1, got["none"]["overhead_ns"]))
                r["wall"].append(got["all"]["wall_ns"] / 1e9)
                r["bare"].append(got["none"]["compute_ns"] / 1e6)
                r["full"].append(got["all"]["compute_ns"] / 1e6)
        print(f"\n{name} {ex_args[name]}")
        for lib in libs:
            r = res[lib]
            print(f"  [{lib or 'build'}]")
            print(f"    compute x  {fmt(r['x'], 'x', 3)}   compute without {fmt(r['bare'], ' ms')}"
                  f"   with {fmt(r['full'], ' ms')}")
            print(f"    overhead x {fmt(r['ox'], 'x', 2)}   wall with payloads {fmt(r['wall'], ' s', 2)}")
    print(f"\n{noisy} of {len(gate.samples)} recordings taken on a busy machine; {gate.summary()}")
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
