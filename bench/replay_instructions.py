#!/usr/bin/env python3
"""Instructions per replayed MPI call, counted by callgrind: repeatable on a busy machine where
timings are not. The 8-byte ping-pong is recorded at two lengths and rank 0 replayed under
valgrind --tool=callgrind; the difference in instructions over the difference in calls is the
cost of one call (MPI_Send or MPI_Recv, alternately), start-up and exit cancelled out.

  bench/replay_instructions.py [--build DIR] [--calls N] [--profile] [--traces DIR]

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


def instructions(tool, prog, tmp, traces, iters, profile):
    trace = traces / f"pp-{iters}"
    args = [str(prog), str(iters), "0", "pingpong8"]
    if not (trace / "manifest.json").exists():
        run([str(tool), "record", "-o", str(trace), "--quiet", "--", "mpiexec", "-n", "2", *args])
    out = tmp / f"cg-{iters}.out"
    extra = ["-o", str(tmp / f"profile-{iters}")] if profile else []
    run([str(tool), "replay", "--rank", "0", "--quiet", *extra, str(trace), "--", "valgrind",
         "--tool=callgrind", f"--callgrind-out-file={out}", *args])
    total = re.search(r"^summary:\s*(\d+)", out.read_text(), re.M)
    if not total:
        raise SystemExit(f"{out}: no callgrind summary line")
    return int(total.group(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--build", default=str(ROOT / "build"))
    ap.add_argument("--calls", type=int, default=20000, help="ping-pong iterations of the shorter run")
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--traces", help="directory for the two recordings, reused when there")
    args = ap.parse_args()
    if not shutil.which("valgrind"):
        raise SystemExit("replay_instructions: valgrind is not installed")
    build = pathlib.Path(args.build)
    tool, prog = build / "tools/encore/encore", build / "bench/bench_capture_loops"
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="encore-replay-ir-"))
    traces = pathlib.Path(args.traces) if args.traces else tmp
    traces.mkdir(parents=True, exist_ok=True)
    n1, n2 = args.calls, 2 * args.calls
    i1 = instructions(tool, prog, tmp, traces, n1, args.profile)
    i2 = instructions(tool, prog, tmp, traces, n2, args.profile)
    # Each iteration is 2 calls; the warm-up loop runs a tenth as many iterations again.
    calls = 2 * (n2 + n2 // 10 - n1 - n1 // 10)
    print(f"replayed 8-byte ping-pong{' with a profile' if args.profile else ''}: "
          f"{(i2 - i1) / calls:.0f} instructions per MPI call "
          f"({i1} and {i2} instructions in all, {calls} calls apart)")
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
