#!/usr/bin/env python3
"""Instructions per replayed MPI call, counted by callgrind: repeatable on a busy machine where
timings are not. The 8-byte ping-pong is recorded at two lengths and rank 0 replayed under
valgrind --tool=callgrind; the difference in instructions over the difference in calls is the
cost of one call (MPI_Send or MPI_Recv, alternately), start-up and exit cancelled out.

  bench/replay_instructions.py [--build DIR] [--calls N] [--profile] [--traces DIR] [--in-calls]

Three figures per call: all threads (the program's and the replay's helper threads: payload
read-ahead, profile writer), the program's thread alone, and with --in-calls the instructions
inside the MPI calls only (callgrind collecting from entry to exit of the PMPI_ functions, a
third run per recording): what a call costs the program.

--profile replays with a profile (-o), to count what writing it costs per call too.
--traces keeps the two recordings in DIR and replays the ones already there: capture's chunk
timing changes the per-call figure a little between recordings, so a fair comparison of two
builds replays the same traces with both.
"""
import argparse
import pathlib
import re
import shutil
import tempfile

from benchlib import run

ROOT = pathlib.Path(__file__).resolve().parent.parent


def callgrind(tool, trace, args, out, extra, callgrind_opts):
    run([str(tool), "replay", "--rank", "0", "--quiet", *extra, str(trace), "--", "valgrind",
         "--tool=callgrind", "--separate-threads=yes", f"--callgrind-out-file={out}",
         *callgrind_opts, *args])
    # One file per thread: out-01 is the program's (the thread that ran main).
    totals = {}
    for f in sorted(out.parent.glob(out.name + "-*")):
        total = re.search(r"^summary:\s*(\d+)", f.read_text(), re.M)
        if not total:
            raise SystemExit(f"{f}: no callgrind summary line")
        totals[f.name[len(out.name) + 1:]] = int(total.group(1))
        f.unlink()
    if "01" not in totals:
        raise SystemExit(f"{out}-01: callgrind wrote no file for the program's thread")
    return totals


def instructions(tool, prog, tmp, traces, iters, profile, in_calls):
    trace = traces / f"pp-{iters}"
    args = [str(prog), str(iters), "0", "pingpong8"]
    if not (trace / "manifest.json").exists():
        run([str(tool), "record", "-o", str(trace), "--quiet", "--", "mpiexec", "-n", "2", *args])
    prof = tmp / f"profile-{iters}"
    extra = ["-o", str(prof)] if profile else []
    totals = callgrind(tool, trace, args, tmp / f"cg-{iters}.out", extra, [])
    shutil.rmtree(prof, ignore_errors=True)
    out = {"all threads": sum(totals.values()), "program's thread": totals["01"]}
    if in_calls:
        calls = callgrind(tool, trace, args, tmp / f"cg-calls-{iters}.out", extra,
                          ["--collect-atstart=no", "--toggle-collect=PMPI_*"])
        shutil.rmtree(prof, ignore_errors=True)
        out["inside the calls"] = calls["01"]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--build", default=str(ROOT / "build"))
    ap.add_argument("--calls", type=int, default=20000, help="ping-pong iterations of the shorter run")
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--traces", help="directory for the two recordings, reused when there")
    ap.add_argument("--in-calls", action="store_true",
                    help="also count the instructions inside the MPI calls only")
    args = ap.parse_args()
    if not shutil.which("valgrind"):
        raise SystemExit("replay_instructions: valgrind is not installed")
    build = pathlib.Path(args.build)
    tool, prog = build / "tools/encore/encore", build / "bench/bench_capture_loops"
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="encore-replay-ir-"))
    traces = pathlib.Path(args.traces) if args.traces else tmp
    traces.mkdir(parents=True, exist_ok=True)
    n1, n2 = args.calls, 2 * args.calls
    i1 = instructions(tool, prog, tmp, traces, n1, args.profile, args.in_calls)
    i2 = instructions(tool, prog, tmp, traces, n2, args.profile, args.in_calls)
    # Each iteration is 2 calls; the warm-up loop runs a tenth as many iterations again.
    calls = 2 * (n2 + n2 // 10 - n1 - n1 // 10)
    print(f"replayed 8-byte ping-pong{' with a profile' if args.profile else ''}, instructions "
          f"per MPI call ({calls} calls apart):")
    for what in i1:
        print(f"  {what:17s} {(i2[what] - i1[what]) / calls:6.0f}   "
              f"({i1[what]} and {i2[what]} in all)")
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
