#!/usr/bin/env python3
"""Capture benchmarks: every figure is a ratio against an untraced run measured in the same
invocation, variants alternated (A B A B ...), medians with their spread.

  bench/capture.py [--build DIR] [--rounds N] [--lib LIBENCORE_DUMP.so ...] [--only PART]

With --lib (repeatable), each round records with every library given (one variant each,
alternated with the plain run): two builds' capture costs compared on the same machine state;
the loops also print each library's time over the first library's in the same round (median)
and in how many rounds it was below.

Measures, on 2 ranks (on a 2-core machine, one per core; bound to it with --bind, else where the
scheduler puts them and their writer threads):
  * the 8-byte ping-pong and an MPI_Iprobe polling loop: time per iteration, traced / plain,
    and the capture cost per MPI call it implies; beside them, the same loops under the floor
    probe (bench_floor_probe: two TSC reads and a 32-byte record a call, nothing else), the
    least any tracer costs on this machine;
  * 1 MiB ping-pong: slowdown, and the rate at which received bytes go into the log as the
    application sees it (payload bytes / tool time charged in the rank);
  * halo2d: bytes per event in the trace, the overhead on its own timed loop, the overhead
    the trace charges to the loop's calls (the tool's own time, steadier under load) and the
    page faults rank 0's thread took in that loop, per iteration, recorded and plain.
The loops time themselves (CLOCK_MONOTONIC inside the program): mpiexec start-up is excluded.
"""
import argparse
import json
import pathlib
import re
import shutil
import statistics
import tempfile

from benchlib import PageReportingOff, QuietGate, add_page_reporting_flag, fmt, lib_env, loops, run

ROOT = pathlib.Path(__file__).resolve().parent.parent


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--build", default=str(ROOT / "build"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--small", type=int, default=200000, help="small-message iterations")
    ap.add_argument("--large", type=int, default=300, help="1 MiB iterations")
    ap.add_argument("--lib", action="append", help="a capture library to compare (repeatable; "
                    "default: the build's), optionally with capture settings for it: "
                    "LIB,ENCORE_COMPRESS=during; an empty LIB is the build's")
    ap.add_argument("--quiet-wait", type=float, default=0.0,
                    help="before each round of the loops, wait up to this many s for the machine "
                    "to be quiet (others' un-niced work, steal: benchlib.QuietGate); 0: no wait")
    ap.add_argument("--only", choices=("loops", "pingpong1M", "halo2d"),
                    help="run one part only (more rounds of it in the same time)")
    ap.add_argument("--bind", action="store_true",
                    help="bind each rank to a core (mpiexec -bind-to core), plain and traced "
                    "runs alike; the capture's writer thread then shares its own rank's core")
    add_page_reporting_flag(ap)
    args = ap.parse_args()
    with PageReportingOff(keep=args.keep_page_reporting):
        return measure(args)


def measure(args):
    """The benchmark itself, which main() runs with free page reporting off."""
    libs = args.lib or [None]
    part = lambda name: args.only in (None, name)
    build = pathlib.Path(args.build)
    tool = build / "tools/encore/encore"
    loops_bin = build / "bench/bench_capture_loops"
    # The least a tracer costs here (bench_floor_probe: two TSC reads and a 32-byte record a
    # call), run beside the plain loops as a reference; absent on builds for other CPUs.
    floor_probe = build / "bench/libbench_floor_probe.so"
    halo = build / "examples/example_halo2d"
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="encore-bench-"))
    mpiexec = ["mpiexec", *(["-bind-to", "core"] if args.bind else []), "-n", "2"]

    def traced(trace, cmd, lib, env=None, stderr=False):
        shutil.rmtree(trace, ignore_errors=True)
        return run([str(tool), "record", "-o", str(trace), "--quiet", "--", *mpiexec, *cmd],
                   {**lib_env(lib), **(env or {})}, stderr)

    def label(lib):
        return "" if len(libs) == 1 else f"  [{lib}]"

    print(f"capture benchmarks: {args.rounds} rounds, A/B alternated, median [min .. max]\n")

    # Small messages and polling --------------------------------------------------------------
    plain, floor, recs = {}, {}, {lib: {} for lib in libs}
    gate = QuietGate(max_wait=args.quiet_wait) if args.quiet_wait > 0 else None
    for _ in range(args.rounds if part("loops") else 0):
        if gate:
            gate.wait()
        for name, v in loops(run([*mpiexec, str(loops_bin), str(args.small), "0", "all"])).items():
            plain.setdefault(name, []).append(v)
        if floor_probe.exists():
            out = run([*mpiexec, "-genv", "LD_PRELOAD", str(floor_probe), str(loops_bin),
                       str(args.small), "0", "all"])
            for name, v in loops(out).items():
                floor.setdefault(name, []).append(v)
        for lib in libs:
            out = traced(tmp / "loops", [str(loops_bin), str(args.small), "0", "all"], lib)
            for name, v in loops(out).items():
                recs[lib].setdefault(name, []).append(v)
    # A ping-pong iteration puts 4 calls on the critical path (each rank's send and receive).
    for name, calls in (("pingpong8", 4), ("iprobe", None)):
        if name not in plain:
            continue
        if name in floor:
            print(f"{name:12s} plain {fmt(plain[name], ' ns/iter')}   floor {fmt(floor[name], ' ns/iter')}"
                  f"  [two TSC reads and a record a call, nothing else]")
            print(f"{'':12s} ratio {fmt([f / p for f, p in zip(floor[name], plain[name])], 'x', 2)}")
        for lib, rec in recs.items():
            ratios = [r / p for r, p in zip(rec[name], plain[name])]
            print(f"{name:12s} plain {fmt(plain[name], ' ns/iter')}   traced {fmt(rec[name], ' ns/iter')}{label(lib)}")
            line = f"{'':12s} ratio {fmt(ratios, 'x', 2)}"
            if calls:
                per_call = [(r - p) / calls for r, p in zip(rec[name], plain[name])]
                line += f"   capture cost {fmt(per_call, ' ns/call')}"
            if lib != libs[0]:
                # Paired with the first library's run of the same round (steadier than the
                # medians when the machine's state moves between rounds).
                pairs = [r / b for r, b in zip(rec[name], recs[libs[0]][name])]
                line += (f"   over the first library {statistics.median(pairs):.2f}x, "
                         f"below it in {sum(x < 1 for x in pairs)}/{len(pairs)} rounds")
            print(line)

    if gate:
        print(f"{'':12s} {gate.summary()}")

    # 1 MiB messages --------------------------------------------------------------------------
    plain1m, rec1m, rates = [], {lib: [] for lib in libs}, {lib: [] for lib in libs}
    for _ in range(args.rounds if part("pingpong1M") else 0):
        plain1m.append(loops(run([*mpiexec, str(loops_bin), "1000", str(args.large), "pingpong1M"]))["pingpong1M"])
        for lib in libs:
            out = traced(tmp / "big", [str(loops_bin), "1000", str(args.large), "pingpong1M"], lib)
            rec1m[lib].append(loops(out)["pingpong1M"])
            stats = json.loads(run([str(tool), "stats", str(tmp / "big"), "--json"]))
            for r in stats["ranks"]:
                recv = next(f for f in r["functions"] if f["name"] == "MPI_Recv")
                if recv["tool_ns"]:
                    # Tool time after each 1 MiB MPI_Recv: copying the received bytes into the log.
                    rates[lib].append(r["bytes_received"] / recv["tool_ns"])  # bytes per ns = GB/s
    for lib in libs if plain1m else []:
        print(f"{'pingpong1M':12s} plain {fmt([v / 1e3 for v in plain1m], ' us/iter')}   "
              f"traced {fmt([v / 1e3 for v in rec1m[lib]], ' us/iter')}{label(lib)}")
        print(f"{'':12s} ratio {fmt([r / p for r, p in zip(rec1m[lib], plain1m)], 'x')}   "
              f"into the log {fmt(rates[lib], ' GB/s per rank')} (received bytes / tool time after MPI_Recv)")

    # halo2d ----------------------------------------------------------------------------------
    halo_args = ["512", "400", "1"]
    # Rank 0's page faults in the loop (its own thread, on stderr): a page of the capture's
    # memory touched for the first time there is one.
    faults_env = {"HALO2D_LOOP_FAULTS": "1"}

    def loop_faults(err):
        return int(re.search(r"^loop_faults (\d+)", err, re.M).group(1)) / int(halo_args[1])

    plain_t, rec_t, bpe = [], {lib: [] for lib in libs}, {lib: [] for lib in libs}
    # The overhead the trace charges to the loop's calls (rank average): the tool's own time,
    # which moves less with the machine's load than the loop's.
    loop_calls = {"MPI_Isend", "MPI_Irecv", "MPI_Waitall", "MPI_Allreduce", "MPI_Get_count",
                  "MPI_Get_elements", "MPI_Type_size"}
    charged = {lib: [] for lib in libs}
    plain_pf, rec_pf = [], {lib: [] for lib in libs}
    for _ in range(args.rounds if part("halo2d") else 0):
        out, err = run([*mpiexec, str(halo), *halo_args], faults_env, stderr=True)
        plain_t.append(float(re.search(r"^time ([\d.eE+-]+)", out, re.M).group(1)))
        plain_pf.append(loop_faults(err))
        for lib in libs:
            out, err = traced(tmp / "halo", [str(halo), *halo_args], lib, faults_env, stderr=True)
            rec_t[lib].append(float(re.search(r"^time ([\d.eE+-]+)", out, re.M).group(1)))
            rec_pf[lib].append(loop_faults(err))
            stats = json.loads(run([str(tool), "stats", str(tmp / "halo"), "--json"]))
            events = sum(r["events"] for r in stats["ranks"])
            size = sum(f.stat().st_size for f in (tmp / "halo").glob("rank-*.events"))
            bpe[lib].append(size / events)
            charged[lib].append(sum(f["tool_ns"] for r in stats["ranks"] for f in r["functions"]
                                    if f["name"] in loop_calls) / len(stats["ranks"]) / 1e6)
    for lib in libs if plain_t else []:
        print(f"{'halo2d':12s} plain {fmt([t * 1e3 for t in plain_t], ' ms')}   "
              f"traced {fmt([t * 1e3 for t in rec_t[lib]], ' ms')}{label(lib)}")
        print(f"{'':12s} overhead {fmt([(r / p - 1) * 100 for r, p in zip(rec_t[lib], plain_t)], ' %')}   "
              f"events file {fmt(bpe[lib], ' bytes/event')} (headers included)")
        print(f"{'':12s} page faults in the loop {fmt(rec_pf[lib], '', 2)} an iteration "
              f"(plain {fmt(plain_pf, '', 2)}; rank 0's thread)")
        print(f"{'':12s} charged to the loop's calls {fmt(charged[lib], ' ms', 2)} a rank "
              "(overhead in the trace)")
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
