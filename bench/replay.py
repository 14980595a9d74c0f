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
    feed rate measured above, "less read" the time the replayed calls actually spent reading
    payload chunks (the profile's replay.payload_read_ns); the goal is 1.05x plus the payload
    read time. The goal is for the programs; loops (about 100 k calls around 20 ms of compute)
    is the per-call stress row, printed with its label: its ratio is the per-call cost times
    the call count.

    The captured compute is measured under capture: the other rank and both writer threads
    share the machine's cores with it, so it can be inflated (which flatters the ratio) or,
    on a busy machine, differ from the replay's for reasons that are not the replay's. Two
    more figures do without it: "own" is the replay's wall over its own compute (1 + the
    replay overhead's share, measured in the same run), and "compute r/c" is the replayed
    compute over the captured one (1.00x when the denominator is fair).

  --only NAME runs the wall/compute rows of that program only (halo2d, master_worker, loops),
  and --skip-calls skips the per-call rows (the feed rate then defaults to 7.9 GB/s).
  --read-ahead both replays each recording twice, with the payload read-ahead on and off,
  alternating which goes first, and prints a row for each: the two are compared on the same
  recordings under the same load (ENCORE_REPLAY_PROFILE_THREAD=1 in the environment compares
  them with the profile's writer thread).
"""
import argparse
import json
import pathlib
import shutil
import statistics
import tempfile

from benchlib import PageReportingOff, add_page_reporting_flag, fmt, loops, run

ROOT = pathlib.Path(__file__).resolve().parent.parent


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--build", default=str(ROOT / "build"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--only", help="wall/compute rows of this program only")
    ap.add_argument("--skip-calls", action="store_true", help="no per-call rows")
    ap.add_argument("--read-ahead", choices=["default", "both"], default="default",
                    help="wall rows with the read-ahead as the replay decides, or on and off")
    add_page_reporting_flag(ap)
    args = ap.parse_args()
    with PageReportingOff(keep=args.keep_page_reporting):
        return measure(args)


def measure(args):
    """The benchmark itself, which main() runs with free page reporting off."""
    build = pathlib.Path(args.build)
    tool, prog = build / "tools/encore/encore", build / "bench/bench_capture_loops"
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="encore-replay-bench-"))
    trace = tmp / "loops"
    small, large = 200000, 200
    gbs = 7.9
    if not args.skip_calls:
        gbs = per_call_rows(args, tool, prog, trace, small, large)
    wall_rows(args, build, tool, prog, tmp, small, large, gbs)
    shutil.rmtree(tmp, ignore_errors=True)


def per_call_rows(args, tool, prog, trace, small, large):
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
    return statistics.median(feed)


def wall_rows(args, build, tool, prog, tmp, small, large, gbs):
    print(f"\nwall / compute: replayed rank's wall time over its compute time in the captured run")
    print("  goal (<= 1.05x plus the payload read time, i.e. 'less feed' <= 1.05x) applies to the "
          "programs (halo2d, master_worker);\n  loops is the per-call stress row: almost no "
          "compute between its calls, so its ratio is 1 + calls x per-call cost / compute")
    for name, rank, cmd, goal in [
        ("halo2d", 0, [build / "examples/example_halo2d", "512", "400", "1"], True),
        ("master_worker", 1, [build / "examples/example_master_worker", "256", "16", "512"], True),
        ("loops", 0, [prog, str(small // 10), str(large // 10)], False),
    ]:
        if args.only and name != args.only:
            continue
        settings = ([("read-ahead on", {"ENCORE_REPLAY_READ_AHEAD": "1"}),
                     ("read-ahead off", {"ENCORE_REPLAY_READ_AHEAD": "0"})]
                    if args.read_ahead == "both" else [("", {})])
        rows = {label: {k: [] for k in ("ratio", "less_feed", "less_read", "own", "rc", "over")}
                for label, _ in settings}
        for i in range(args.rounds):
            rec = tmp / f"{name}-{i}"
            run([str(tool), "record", "-o", str(rec), "--quiet", "--", "mpiexec", "-n", "2",
                 *map(str, cmd)])
            captured_rank = rank_stats(tool, rec, rank)
            # Alternating which setting goes first, so that neither always follows the capture.
            for label, env in (settings if i % 2 == 0 else settings[::-1]):
                prof = tmp / f"{name}-{i}-replay"
                run([str(tool), "replay", "--rank", str(rank), "--quiet", "-o", str(prof),
                     str(rec), "--", *map(str, cmd)], env=env)
                replayed_rank = rank_stats(tool, prof, rank)
                r = rows[label]
                wall = replayed_rank["compute_ns"] + replayed_rank["overhead_ns"]
                compute = max(captured_rank["compute_ns"], 1)
                r["ratio"].append(wall / compute)
                r["less_feed"].append((wall - captured_rank["bytes_received"] / gbs) / compute)
                read_ns = payload_read_ns(prof)
                if read_ns is not None:
                    r["less_read"].append((wall - read_ns) / compute)
                r["own"].append(wall / max(replayed_rank["compute_ns"], 1))
                r["rc"].append(replayed_rank["compute_ns"] / compute)
                r["over"].append(replayed_rank["overhead_ns"] / max(replayed_rank["events"], 1))
                shutil.rmtree(prof, ignore_errors=True)
            shutil.rmtree(rec, ignore_errors=True)
        label = "[goal 1.05x]" if goal else "[per-call stress, no goal]"
        for setting, _ in settings:
            r = rows[setting]
            print(f"{name:14s} rank {rank} {label}{' ' + setting if setting else ''}: "
                  f"{fmt(r['ratio'], 'x', 2)}   less feed {fmt(r['less_feed'], 'x', 2)}   "
                  + (f"less read {fmt(r['less_read'], 'x', 2)}   " if r["less_read"] else "")
                  + f"replay overhead {fmt(r['over'], ' ns/call')}   "
                  f"(captured compute {captured_rank['compute_ns'] / 1e6:.1f} ms, "
                  f"{captured_rank['events']} calls, "
                  f"{captured_rank['bytes_received'] / 1e6:.1f} MB received)")
            print(f"{'':14s} without the captured compute: own {fmt(r['own'], 'x', 3)}   "
                  f"compute r/c {fmt(r['rc'], 'x', 2)}")


def payload_read_ns(profile):
    """The replayed calls' time reading payload chunks, if the profile's manifest has it."""
    m = json.loads((profile / "manifest.json").read_text())
    return m.get("replay", {}).get("payload_read_ns")


def rank_stats(tool, trace, rank):
    stats = json.loads(run([str(tool), "stats", "--json", str(trace)]))
    return next(r for r in stats["ranks"] if r["rank"] == rank)


if __name__ == "__main__":
    main()
