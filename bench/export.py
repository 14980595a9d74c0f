#!/usr/bin/env python3
"""Export benchmarks: `encore export --to otf2|dumpi` throughput in trace events per second and
the exporter's peak memory, on two recordings of the 8-byte ping-pong (bench_capture_loops), one
four times longer than the other: bounded memory means the same peak for both.

  bench/export.py [--build DIR] [--iters N] [--rounds R]

Formats are alternated (otf2 dumpi otf2 dumpi ...); each figure is the median [min .. max] of
R runs. The event count is the one the exporter prints; time and peak RSS are the child's own
(wall clock around the command, ru_maxrss of the finished child).
"""
import argparse
import os
import pathlib
import re
import shutil
import subprocess
import tempfile
import time

from benchlib import fmt, run

ROOT = pathlib.Path(__file__).resolve().parent.parent


def export(tool, fmt_name, trace, out):
    """(events, seconds, peak RSS in MiB) of one export run in a fresh process."""
    shutil.rmtree(out, ignore_errors=True)
    pid_start = time.perf_counter()
    proc = subprocess.Popen([str(tool), "export", "--to", fmt_name, str(trace), str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - pid_start
    stdout = proc.stdout.read()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"export --to {fmt_name} failed:\n{proc.stderr.read()}")
    events = int(re.search(r": (\d+) events ->", stdout).group(1))
    return events, seconds, usage.ru_maxrss / 1024


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--build", default=str(ROOT / "build"))
    ap.add_argument("--iters", type=int, default=250000, help="ping-pong iterations (small trace)")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    build = pathlib.Path(args.build)
    tool, prog = build / "tools/encore/encore", build / "bench/bench_capture_loops"
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="encore-export-bench-"))
    try:
        traces = {}
        for scale in (1, 4):
            trace = tmp / f"pingpong-x{scale}"
            run([str(tool), "record", "-o", str(trace), "--quiet", "--", "mpiexec", "-n", "2",
                 str(prog), str(args.iters * scale), "0", "pingpong8"])
            traces[scale] = trace
        results = {}
        for _ in range(args.rounds):
            for scale, trace in traces.items():
                for name in ("otf2", "dumpi"):
                    events, secs, rss = export(tool, name, trace, tmp / f"out-{name}")
                    r = results.setdefault((name, scale), {"events": events, "rate": [], "rss": []})
                    r["rate"].append(events / secs / 1e6)
                    r["rss"].append(rss)
        print(f"{'format':6} {'trace':>12}  {'Mevents/s':>28}  {'peak RSS MiB':>28}")
        for (name, scale), r in sorted(results.items()):
            print(f"{name:6} {r['events']:>12}  {fmt(r['rate'])}  {fmt(r['rss'])}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
