#!/usr/bin/env python3
"""How much of the tool's own time a recorded polling loop's corrected times keep: one rank
polls for a message that never comes (bench_lone_polls: MPI_Iprobe, then WORK turns of a busy
loop), plain and recorded, alternated. The trace's corrected span between the two barriers
around the loop, per poll, is the capture's estimate of the plain loop's time per poll; the
difference is tool time left in the corrected times (in the polls' gaps, which consumers read
as the program's compute, and in their durations, where the clock reads themselves land).

  bench/poll_gaps.py [--build DIR] [--rounds N] [--polls N] [--work W ...] [--lib LIB ...]

Per work value and library: plain ns/poll, recorded ns/poll (the program's own timer: what the
capture costs), corrected ns/poll, its excess over plain, and the mean gap and duration of the
recorded polls; medians over the rounds [min .. max]. With --lib (repeatable), each round records
with every library given (LIB[,VAR=VALUE...] as in capture.py).
"""
import argparse
import pathlib
import re
import shutil
import statistics
import tempfile

from benchlib import PageReportingOff, add_page_reporting_flag, fmt, lib_env, run

ROOT = pathlib.Path(__file__).resolve().parent.parent
UNITS = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}
LINE = re.compile(r"r0 t0 #\d+ (\S+)\s+([\d.]+) ms \+([\d.]+)(ns|us|ms|s)\b")


def corrected(show_output):
    """(span per poll, mean gap, mean duration) of the MPI_Iprobe calls between the two
    barriers, from `encore show` of rank 0 (start times in ms with ns digits)."""
    barriers, gaps, durs, prev_end = [], [], [], None
    for line in show_output.splitlines():
        m = LINE.match(line)
        if not m:
            continue
        fn, start = m.group(1), float(m.group(2)) * 1e6
        dur = float(m.group(3)) * UNITS[m.group(4)]
        if fn == "MPI_Barrier":
            barriers.append((start, dur))
        elif fn == "MPI_Iprobe" and len(barriers) == 1:
            if prev_end is not None:
                gaps.append(start - prev_end)
            durs.append(dur)
            prev_end = start + dur
    if len(barriers) != 2 or not durs:
        raise SystemExit("poll_gaps: the trace does not hold the two barriers around the loop")
    span = barriers[1][0] - (barriers[0][0] + barriers[0][1])
    return span / len(durs), statistics.mean(gaps), statistics.mean(durs)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--build", default=str(ROOT / "build"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--polls", type=int, default=200000)
    ap.add_argument("--work", type=int, action="append", help="busy-loop turns between polls "
                    "(repeatable; default 0 and 20)")
    ap.add_argument("--lib", action="append", help="a capture library to compare (repeatable)")
    add_page_reporting_flag(ap)
    args = ap.parse_args()
    with PageReportingOff(keep=args.keep_page_reporting):
        measure(args)


def measure(args):
    build = pathlib.Path(args.build)
    tool, prog = build / "tools/encore/encore", build / "bench/bench_lone_polls"
    libs, works = args.lib or [None], args.work or [0, 20]
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="encore-poll-gaps-"))
    per_poll = re.compile(r"ns_per_poll=([\d.]+)")
    plain = {w: [] for w in works}
    rec = {(w, lib): {"traced": [], "span": [], "gap": [], "dur": []} for w in works for lib in libs}
    print(f"poll gaps: one rank, {args.polls} failed MPI_Iprobe calls, {args.rounds} rounds, "
          f"median [min .. max]\n")
    for _ in range(args.rounds):
        for w in works:
            cmd = ["mpiexec", "-n", "1", str(prog), str(args.polls), str(w)]
            plain[w].append(float(per_poll.search(run(cmd)).group(1)))
            for lib in libs:
                trace = tmp / "t"
                shutil.rmtree(trace, ignore_errors=True)
                out = run([str(tool), "record", "-o", str(trace), "--quiet", "--", *cmd],
                          lib_env(lib))
                r = rec[(w, lib)]
                r["traced"].append(float(per_poll.search(out).group(1)))
                span, gap, dur = corrected(run([str(tool), "show", str(trace), "--rank", "0"]))
                r["span"].append(span)
                r["gap"].append(gap)
                r["dur"].append(dur)
    shutil.rmtree(tmp, ignore_errors=True)
    for w in works:
        print(f"work={w:<4d} plain      {fmt(plain[w], ' ns/poll', 2)}")
        for lib in libs:
            r = rec[(w, lib)]
            tag = f"  [{lib}]" if len(libs) > 1 else ""
            excess = [s - p for s, p in zip(r["span"], plain[w])]
            print(f"{'':9s} recorded   {fmt(r['traced'], ' ns/poll', 2)}{tag}")
            print(f"{'':9s} corrected  {fmt(r['span'], ' ns/poll', 2)}   over plain "
                  f"{fmt(excess, ' ns/poll', 2)}")
            print(f"{'':9s} gap        {fmt(r['gap'], ' ns', 2)}   duration {fmt(r['dur'], ' ns', 2)}")


if __name__ == "__main__":
    main()
