#!/usr/bin/env python3
"""Replay benchmarks: the cost of answering MPI calls from a trace, measured by the replayed
program's own loop timers (CLOCK_MONOTONIC inside the program), medians of several runs.

  bench/replay.py [--build DIR] [--rounds N]

  * per-call cost: the 8-byte ping-pong replayed alone (2 MPI calls an iteration, nothing to
    wait for), and the MPI_Iprobe polling loop;
  * payload feed rate: the 1 MiB ping-pong replayed (each iteration unpacks 1 MiB received and
    hashes 1 MiB sent), as bytes fed per second;
  * the replayed rank's loop time against the same loop in the captured run;
  * wall time against compute time: examples (halo2d, master_worker) and the loops program,
    recorded then replayed with a profile (-o), alternating; the replay's wall clock (the
    profile's compute + replay overhead, from its first MPI call to its last) over the captured
    rank's compute time (`encore stats --json`). "less feed" takes out the received bytes at the
    feed rate measured above (the goal is 1.05x plus the payload read time). The goal is for the
    programs; loops (about 100 k calls around 20 ms of compute) is the per-call stress row,
    printed with its label: its ratio is the per-call cost times the call count.
"""
import argparse
import json
import pathlib
import shutil
import statistics
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

    # wall time against compute time ------------------------------------------------------------
    gbs = statistics.median(feed)
    print(f"\nwall / compute: replayed rank's wall time over its compute time in the captured run")
    print("  goal (<= 1.05x plus the payload read time, i.e. 'less feed' <= 1.05x) applies to the "
          "programs (halo2d, master_worker);\n  loops is the per-call stress row: almost no "
          "compute between its calls, so its ratio is 1 + calls x per-call cost / compute")
    for name, rank, cmd, goal in [
        ("halo2d", 0, [build / "examples/example_halo2d", "512", "400", "1"], True),
        ("master_worker", 1, [build / "examples/example_master_worker", "256", "16", "512"], True),
        ("loops", 0, [prog, str(small // 10), str(large // 10)], False),
    ]:
        ratio, less_feed, over_call = [], [], []
        for i in range(args.rounds):
            rec, prof = tmp / f"{name}-{i}", tmp / f"{name}-{i}-replay"
            run([str(tool), "record", "-o", str(rec), "--quiet", "--", "mpiexec", "-n", "2",
                 *map(str, cmd)])
            run([str(tool), "replay", "--rank", str(rank), "--quiet", "-o", str(prof), str(rec),
                 "--", *map(str, cmd)])
            captured_rank = rank_stats(tool, rec, rank)
            replayed_rank = rank_stats(tool, prof, rank)
            wall = replayed_rank["compute_ns"] + replayed_rank["overhead_ns"]
            compute = max(captured_rank["compute_ns"], 1)
            ratio.append(wall / compute)
            less_feed.append((wall - captured_rank["bytes_received"] / gbs) / compute)
            over_call.append(replayed_rank["overhead_ns"] / max(replayed_rank["events"], 1))
            shutil.rmtree(rec, ignore_errors=True)
            shutil.rmtree(prof, ignore_errors=True)
        label = "[goal 1.05x]" if goal else "[per-call stress, no goal]"
        print(f"{name:14s} rank {rank} {label}: {fmt(ratio, 'x', 2)}   "
              f"less feed {fmt(less_feed, 'x', 2)}   "
              f"replay overhead {fmt(over_call, ' ns/call')}   "
              f"(captured compute {captured_rank['compute_ns'] / 1e6:.1f} ms, "
              f"{captured_rank['events']} calls, {captured_rank['bytes_received'] / 1e6:.1f} MB received)")
    shutil.rmtree(tmp, ignore_errors=True)


def rank_stats(tool, trace, rank):
    stats = json.loads(run([str(tool), "stats", "--json", str(trace)]))
    return next(r for r in stats["ranks"] if r["rank"] == rank)


if __name__ == "__main__":
    main()
