#!/usr/bin/env python3
"""Replay benchmarks: the cost of answering MPI calls from a trace, measured by the replayed
program's own loop timers (CLOCK_MONOTONIC inside the program), medians of several runs.

  bench/replay.py [--build DIR] [--rounds N]

  * per-call cost: the 8-byte ping-pong replayed alone (2 MPI calls an iteration, nothing to
    wait for), and the MPI_Iprobe polling loop;
  * payload feed rate: the 1 MiB ping-pong replayed (each iteration unpacks 1 MiB received and
    hashes 1 MiB sent), as bytes fed per second;
  * the replayed rank's loop time against the same loop in the captured run.
"""
import argparse
import pathlib
import shutil
import tempfile

from benchlib import fmt, loops, run

ROOT = pathlib.Path(__file__).resolve().parent.parent


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--build", default=str(ROOT / "build"))
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    build = pathlib.Path(args.build)
    tool, prog = build / "tools/encore/encore", build / "bench/bench_capture_loops"
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="encore-replay-bench-"))
    trace = tmp / "loops"
    small, large = 200000, 200
    captured = loops(run([str(tool), "record", "-o", str(trace), "--quiet", "--", "mpiexec", "-n",
                          "2", str(prog), str(small), str(large)]))
    replayed = {}
    for _ in range(args.rounds):
        out = run([str(tool), "replay", "--rank", "0", "--quiet", str(trace), "--", str(prog),
                   str(small), str(large)])
        for name, v in loops(out).items():
            replayed.setdefault(name, []).append(v)
    print(f"replay benchmarks: {args.rounds} replays of rank 0, median [min .. max]\n")
    print(f"{'pingpong8':12s} replayed {fmt(replayed['pingpong8'], ' ns/iter')}   "
          f"per call {fmt([v / 2 for v in replayed['pingpong8']], ' ns')}   "
          f"(captured run: {captured['pingpong8']:.1f} ns/iter)")
    print(f"{'iprobe':12s} replayed {fmt(replayed['iprobe'], ' ns/iter')}   "
          f"(captured run: {captured['iprobe']:.1f} ns/iter)")
    feed = [2 * (1 << 20) / v for v in replayed["pingpong1M"]]  # bytes per ns = GB/s
    print(f"{'pingpong1M':12s} replayed {fmt([v / 1e3 for v in replayed['pingpong1M']], ' us/iter')}   "
          f"feed {fmt(feed, ' GB/s')} (1 MiB unpacked + 1 MiB hashed per iteration)   "
          f"(captured run: {captured['pingpong1M'] / 1e3:.1f} us/iter)")
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
