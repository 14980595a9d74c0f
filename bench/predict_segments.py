#!/usr/bin/env python3
"""Where a replay's compute differs from the real run's, segment by segment.

A compute segment is the time between an MPI call's return and the next call of the same rank.
For one rank of one example at 2 ranks this prints each segment's time three ways:
  plain     plain runs with bench_call_probe preloaded (every MPI call's entry and exit, kept in
            memory until MPI_Finalize): the real run's segments, median over --runs runs;
  captured  the recording's (corrected) segments (`encore export --to chrome`, whose compute
            records are the timeline walk's gaps, in ns);
  replayed  the replay profile's segments (`encore replay -o`), median over --runs replays.
And, on a machine busy with other work, what preemption does not move: the plain runs' compute
in the thread's CPU time (bench_call_probe with ENCORE_CALLS_CPU=1) against the replays'
compute less their measured stalls (the profile's replay.compute_ns - replay.stall.segments_ns).
Calls line up one for one (same program, same arguments; the probe times MPI_Wtime too, as
the capture records it), so the rows are: the totals, the segments summed per pair of calls
around them, and the single segments where replayed and plain differ most.
The wall-clock segments come from plain runs without the CPU clock's reads (system calls
inside every segment), the CPU line from as many runs with them.
Runs alternate (plain, plain with CPU times, replay, ...) behind benchlib's quiet gate, as in
predict_accuracy.py. Not a test: nothing is asserted.
Usage: bench/predict_segments.py --build build [--example halo2d] [--args '1024 400']
       [--rank 0] [--runs 5] [--top 8] [--replay-env K=V ...] [--probe LIB]"""
import argparse
import json
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from benchlib import PageReportingOff, QuietGate, add_page_reporting_flag  # noqa: E402
from benchlib import EXAMPLE_ARGS  # noqa: E402
from predict_accuracy import run  # noqa: E402


def plain_calls(cmd, probe, tmp, rank, cpu):
    """[(function, segment ns before it, its CPU time)] of one rank in a plain run. With `cpu`,
    the probe reads the thread's CPU clock too: a system call at each end of every call, which
    lies inside the wall-clock segments (about 0.8 us a segment here), so those are taken from
    a run without it."""
    out = pathlib.Path(tempfile.mkdtemp(dir=tmp))
    run(cmd, env={**os.environ, "LD_PRELOAD": str(probe), "ENCORE_CALLS_DIR": str(out),
                  "ENCORE_SPAN_DIR": str(out), "ENCORE_CALLS_CPU": "1" if cpu else "0"})
    lines = (out / f"rank-{rank}.calls").read_text().split("\n")
    shutil.rmtree(out)
    if "truncated" in lines:
        raise SystemExit("bench_call_probe ran out of room: set ENCORE_CALLS_MAX")
    calls, leave, leave_cpu = [], None, None
    for line in filter(None, lines):
        name, enter, left, enter_cpu, left_cpu = line.split()
        calls.append((name, 0 if leave is None else int(enter) - leave,
                      0 if leave is None else int(enter_cpu) - leave_cpu))
        leave, leave_cpu = int(left), int(left_cpu)
    return calls


def trace_calls(tool, trace, rank, tmp):
    """[(function, segment ns before it)] of one rank of a trace or profile, from its Chrome
    export (compute records carry the timeline's gaps; every call is one record)."""
    out = tmp / "export.json"
    run([tool, "export", "--to", "chrome", trace, out])
    doc = json.loads(out.read_text())
    out.unlink()
    calls, gap = [], 0
    for e in doc["traceEvents"]:
        if e.get("pid") != rank or e.get("ph") != "X":
            continue
        if e["name"] == "compute":
            gap = round(float(e["dur"]) * 1000)
        else:
            calls.append((e["name"], gap))
            gap = 0
    return calls


def check_aligned(what, calls, ref):
    if [c[0] for c in calls] != [c[0] for c in ref]:
        first = next((i for i, (a, b) in enumerate(zip(calls, ref)) if a[0] != b[0]),
                     min(len(calls), len(ref)))
        raise SystemExit(f"{what}: calls differ from the capture's at call {first} "
                         f"({len(calls)} calls against {len(ref)})")


def ms(ns):
    return f"{ns / 1e6:10.3f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--example", default="halo2d")
    ap.add_argument("--args", default=None, help="the example's arguments (default: the "
                    "accuracy bench's)")
    ap.add_argument("--rank", type=int, default=0)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--top", type=int, default=8)
    ap.add_argument("--quiet-wait", type=float, default=20.0)
    ap.add_argument("--probe", default=None,
                    help="bench_call_probe's library (default: the build's)")
    ap.add_argument("--replay-env", action="append", default=[],
                    help="K=V set for the replays (e.g. ENCORE_REPLAY_READ_AHEAD=0)")
    add_page_reporting_flag(ap)
    a = ap.parse_args()
    with PageReportingOff(keep=a.keep_page_reporting):
        return measure(a)


def measure(a):
    """The benchmark itself, which main() runs with free page reporting off."""
    build = pathlib.Path(a.build).resolve()
    tool = build / "tools/encore/encore"
    probe = pathlib.Path(a.probe) if a.probe else build / "bench/libbench_call_probe.so"
    if not probe.exists():
        raise SystemExit(f"{probe}: not built (cmake --build {a.build} --target bench_call_probe)")
    args = (a.args if a.args is not None else EXAMPLE_ARGS.get(a.example, "")).split()
    program = [build / "examples" / f"example_{a.example}", *args]
    mpiexec = [shutil.which("mpiexec"), "-bind-to", "core", "-n", 2]
    replay_env = dict(kv.split("=", 1) for kv in a.replay_env)
    gate = QuietGate(max_wait=a.quiet_wait)
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="predict-segments-"))
    try:
        trace = tmp / "trace"
        gate.wait()
        run([tool, "record", "-o", trace, "--", *mpiexec, *program])
        captured = trace_calls(tool, trace, a.rank, tmp)
        plains, plains_cpu, replays, replay_cpu = [], [], [], []
        for i in range(a.runs):
            gate.wait()
            plains.append(plain_calls([*mpiexec, *program], probe, tmp, a.rank, cpu=False))
            check_aligned("plain run", plains[-1], captured)
            gate.wait()
            plains_cpu.append(plain_calls([*mpiexec, *program], probe, tmp, a.rank, cpu=True))
            check_aligned("plain run", plains_cpu[-1], captured)
            prof = tmp / f"profile-{i}"
            gate.wait()
            run([tool, "replay", "--rank", a.rank, trace, "-o", prof, "--", *program],
                env={**os.environ, **replay_env})
            replays.append(trace_calls(tool, prof, a.rank, tmp))
            done = json.loads((prof / "manifest.json").read_text())["replay"]
            replay_cpu.append(done["compute_ns"] - done.get("stall", {}).get("segments_ns", 0))
            check_aligned("replay profile", replays[-1], captured)
            shutil.rmtree(prof)
        names = [n for n, _ in captured]
        # Per position: the median over runs (the first segment, before MPI_Init, is no
        # program compute: left out).
        plain = [statistics.median(p[k][1] for p in plains) for k in range(len(names))]
        rep = [statistics.median(r[k][1] for r in replays) for k in range(len(names))]
        cap = [g for _, g in captured]
        span = range(1, len(names))
        print(f"{a.example} {' '.join(args)}, rank {a.rank}: {len(names)} calls, "
              f"{a.runs} plain runs and replays (medians per segment)")
        tot = [sum(plain[k] for k in span), sum(cap[k] for k in span), sum(rep[k] for k in span)]
        print(f"  all segments (ms):       plain {ms(tot[0])}  captured {ms(tot[1])} "
              f"({100 * (tot[1] / tot[0] - 1):+.2f} %)  replayed {ms(tot[2])} "
              f"({100 * (tot[2] / tot[0] - 1):+.2f} %)")
        plain_cpu = sum(statistics.median(p[k][2] for p in plains_cpu) for k in span)
        rep_cpu = statistics.median(replay_cpu)
        print(f"  CPU time (ms):           plain {ms(plain_cpu)}  replayed less stalls "
              f"{ms(rep_cpu)} ({100 * (rep_cpu / plain_cpu - 1):+.2f} %) "
              f"[{min(replay_cpu) / 1e6:.3f} .. {max(replay_cpu) / 1e6:.3f}]")
        for label, runs in (("plain", plains), ("replayed", replays)):
            sums = sorted(sum(r[k][1] for k in span) for r in runs)
            print(f"  {label} per run (ms):    " + " ".join(f"{s / 1e6:.3f}" for s in sums))
        pairs = {}
        for k in span:
            row = pairs.setdefault((names[k - 1], names[k]), [0, 0, 0, 0])
            row[0] += 1
            row[1] += plain[k]
            row[2] += cap[k]
            row[3] += rep[k]
        print("  per pair of calls (ms; sorted by replayed - plain):")
        print(f"    {'segment':<44} {'count':>6} {'plain':>10} {'captured':>10} {'replayed':>10}")
        for (p, n), (c, pl, ca, re) in sorted(pairs.items(), key=lambda kv: -abs(kv[1][3] -
                                                                                kv[1][1])):
            print(f"    {p[4:] + ' -> ' + n[4:]:<44} {c:>6} {ms(pl)} {ms(ca)} {ms(re)}")
        print(f"  single segments where replayed - plain is largest (ms):")
        for k in sorted(span, key=lambda k: -abs(rep[k] - plain[k]))[:a.top]:
            print(f"    #{k:<6} {names[k - 1][4:] + ' -> ' + names[k][4:]:<36} plain {ms(plain[k])}"
                  f"  captured {ms(cap[k])}  replayed {ms(rep[k])}")
        print(f"machine: {gate.summary()}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
