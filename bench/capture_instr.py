#!/usr/bin/env python3
"""Capture cost in instructions, counted by callgrind: repeatable when the machine is busy, where
wall-clock ratios are not (bench/capture.py). For each loop of bench_capture_loops it records
the program under `encore record` with both ranks under valgrind --tool=callgrind, and prints,
per MPI function, the instructions the tool spends per call: the shim's inclusive count minus
that of the PMPI calls it makes, divided by the number of calls (clock reads count as one
instruction each; their time is not in these figures), and in parentheses the PMPI calls' own
instructions per call, what the call costs untraced (for the light MPI_Recv, PMPI_Recv and the
PMPI_Iprobe of a receive that helps its writer while it waits).

  bench/capture_instr.py [--build DIR] [--iters N] [--lib libencore-dump.so] [--lines FN,...] [--writer]

--lines MPI_Send,MPI_Recv adds, for each of those shims, where its own instructions go: per
source line (inlined code counted at its own line), per call, the PMPI call left out (with
--halo2d too).

--halo2d "512 400 1" measures example_halo2d with those arguments instead of the loops: per
rank, the tool's instructions on the application thread (every shim's own, summed), per
function and in all (the writer thread's work is not in them).

--writer measures the writer's work instead: the instructions spent in
TraceWriter::drain_segment (every chunk's encoding, checksum and write, whichever thread drains
it; the compression after the run is not in it) per event of the rank, and the functions they go
to (their own instructions, per event; inlined code counts in its caller, by source file), on
the ping-pong, on a ping-pong with 8 failing MPI_Iprobe calls an iteration on rank 0 (and the
cost of one more such poll: 40 an iteration against 8) and on the polling loop.

Needs valgrind (not a dependency of the build).
"""
import argparse
import os
import pathlib
import re
import shutil
import subprocess
import tempfile

from benchlib import run

ROOT = pathlib.Path(__file__).resolve().parent.parent

ENTRY = re.compile(r"\s*([\d,]+) .*\*  (.*):(MPI_\w+)(?: |$)")
PMPI = re.compile(r"\s*([\d,]+) .*>   \?\?\?:P(MPI_\w+) \(([\d,]+)x\)")


def per_call(callgrind_file):
    """{function: (calls, tool instructions per call, MPI's own instructions per call)} from
    one rank's callgrind output."""
    out = subprocess.run(["callgrind_annotate", "--tree=calling", "--inclusive=yes",
                          "--threshold=100", str(callgrind_file)],
                         capture_output=True, text=True, check=True).stdout
    # A shim's inclusive count is its dump_shims.cpp entry's. It may be listed twice, under its
    # file's absolute path and under one relative to the working directory (run from /tmp,
    # callgrind names part of /tmp/build/... so): the larger entry. Its PMPI calls are under
    # the entry of whichever code made them, named after the shim it is inlined in (the light
    # MPI_Recv's, light_call.hpp:MPI_Recv, makes PMPI_Recv and the waiting receive's
    # PMPI_Iprobe): every PMPI call under an entry of the shim's name counts as the MPI call's
    # own, each (file, callee) once.
    totals, pmpi, current = {}, {}, None
    for line in out.splitlines():
        if m := ENTRY.match(line):
            current = (pathlib.PurePath(m.group(2)).name, m.group(3))
            if current[0] == "dump_shims.cpp":
                totals[current[1]] = max(totals.get(current[1], 0), int(m.group(1).replace(",", "")))
        elif not line.strip():
            current = None
        elif current and (m := PMPI.match(line)):
            key = (current[0], m.group(2))
            calls = pmpi.setdefault(current[1], {})
            cost, n = int(m.group(1).replace(",", "")), int(m.group(3).replace(",", ""))
            old = calls.get(key, (0, 0))
            calls[key] = max(old, (cost, n))
    result = {}
    for f, total in totals.items():
        calls = pmpi.get(f, {})
        n = max((c[1] for (_, callee), c in calls.items() if callee == f), default=0)
        own = sum(c[0] for c in calls.values())
        if n:
            result[f] = (n, (total - own) / n, own / n)
    return result


def per_line(callgrind_file, functions):
    """{function: {(file, line): self instructions}} inside the given functions, from a
    callgrind file whose positions include lines (inlined code keeps its own file and line)."""
    names, cost = {}, {f: {} for f in functions}

    def name(kind, text):
        m = re.match(r"\((\d+)\)(?: (.*))?", text)
        if not m:
            return text
        if m.group(2):
            names[(kind, m.group(1))] = m.group(2)
        return names.get((kind, m.group(1)), m.group(1))

    fields, fn, fl, here, pos, after_call = ["line"], None, None, None, {}, False
    for raw in open(callgrind_file):
        raw = raw.rstrip("\n")
        if raw.startswith("positions:"):
            fields = raw.split()[1:]
        elif raw.startswith("fl="):
            fl = here = name("fl", raw[3:])
        elif raw.startswith(("fi=", "fe=")):
            here = name("fl", raw[3:])
        elif raw.startswith("fn="):
            fn, here = name("fn", raw[3:]), fl
        elif raw.startswith(("cfn=", "cfl=", "cfi=")):
            name("fn" if raw.startswith("cfn") else "fl", raw[raw.index("=") + 1:])
        elif raw.startswith("calls="):
            after_call = True  # the next cost line is the call's inclusive cost
        elif raw and (raw[0].isdigit() or raw[0] in "+-*"):
            parts = raw.split()
            for key, tok in zip(fields, parts):
                prev = pos.get(key, 0)
                pos[key] = prev if tok == "*" else prev + int(tok, 0) if tok[0] in "+-" else int(tok, 0)
            if after_call:
                after_call = False
            elif fn in cost and len(parts) > len(fields):
                key = (here, pos["line"])
                cost[fn][key] = cost[fn].get(key, 0) + int(parts[len(fields)])
    return cost


def print_lines(callgrind_file, counts, lines_arg):
    """Where the shims named in lines_arg spend their own instructions, per source line and
    call (the PMPI call left out)."""
    wanted = [fn for fn in (lines_arg or "").split(",") if fn in counts]
    for fn, lines in per_line(callgrind_file, wanted).items():
        calls = counts[fn][0]
        print(f"  {fn}, per call, by source line:")
        for (file, line), c in sorted(lines.items(), key=lambda kv: -kv[1]):
            if c / calls >= 0.5:
                print(f"    {c / calls:6.1f}  {pathlib.Path(file).name}:{line}")


def halo2d(build, tool, env, tmp, halo_args, lines_arg):
    """The tool's instructions on each rank's application thread while recording halo2d."""
    run([str(tool), "record", "-o", str(tmp / "trace"), "--quiet", "--", "mpiexec", "-n", "2",
         "valgrind", "--tool=callgrind", "--separate-threads=yes",
         f"--callgrind-out-file={tmp}/cg.%p", str(build / "examples/example_halo2d"), *halo_args],
        env=env)
    # Thread 1 of each process is the application's (the writer thread starts later).
    files = sorted(tmp.glob("cg.*-01"), key=lambda p: int(p.name.split(".")[1].split("-")[0]))
    print(f"halo2d {' '.join(halo_args)}: tool instructions on the application thread (callgrind)\n")
    for rank, f in enumerate(files):
        counts = per_call(f)
        total = sum(calls * instr for calls, instr, _ in counts.values())
        print(f"process {rank}: {total / 1e6:.2f} M instructions in the shims, "
              f"{sum(c for c, _, _ in counts.values())} calls")
        for fn, (calls, instr, _) in sorted(counts.items(), key=lambda kv: -kv[1][0] * kv[1][1]):
            if calls * instr >= total / 100:
                print(f"  {fn:14s} {calls:8d} calls  {instr:8.0f} instr/call  "
                      f"{calls * instr / 1e6:6.2f} M")
        print_lines(f, counts, lines_arg)


WRITER_FN = "*TraceWriter::drain_segment*"


def events_per_rank(tool, trace):
    """[events of rank 0, of rank 1, ...] from `encore check`."""
    out = run([str(tool), "check", str(trace)])
    return [int(m.group(1)) for m in re.finditer(r"complete \((\d+) events", out)]


def self_costs(callgrind_file):
    """[(own instructions, "function (file)")] of every function in a callgrind file: inlined
    code is listed under its caller with its own source file."""
    out = subprocess.run(["callgrind_annotate", "--inclusive=no", "--threshold=100", "--auto=no",
                          str(callgrind_file)], capture_output=True, text=True).stdout
    rows = []
    for line in out.splitlines():
        m = re.match(r"\s*([\d,]+) \([ \d.]+%\)\s+(\S[^:]*):(.*?)(?: \[\S+\])?$", line)
        if m and m.group(2) != "PROGRAM TOTALS":
            fn = re.sub(r"\(.*\)$", "", m.group(3)).split("encore::")[-1]
            rows.append((int(m.group(1).replace(",", "")), f"{fn} ({pathlib.Path(m.group(2)).name})"))
    return rows


def writer_run(tool, loops_bin, env, out, args):
    """[(events, writer instructions, {function: instructions})] per rank of one recording."""
    out.mkdir()
    # No periodic flush: chunks are whole segments, as in a run at full speed (valgrind slows
    # the program some 50 times, and a flush every half second would cut small chunks).
    run([str(tool), "record", "-o", str(out / "trace"), "--quiet", "--flush-ms", "3600000",
         "--", "mpiexec", "-n", "2",
         "valgrind", "--tool=callgrind", "--separate-threads=yes", "--collect-atstart=no",
         f"--toggle-collect={WRITER_FN}", f"--callgrind-out-file={out}/cg.%p",
         str(loops_bin), *map(str, args)], env=env)
    events = events_per_rank(tool, out / "trace")
    pids = sorted({int(f.name.split(".")[1].split("-")[0]) for f in out.glob("cg.*")})
    ranks = []
    for rank, pid in enumerate(pids):
        merged = {}
        for f in out.glob(f"cg.{pid}-*"):
            for cost, fn in self_costs(f):
                merged[fn] = merged.get(fn, 0) + cost
        ranks.append((events[rank], sum(merged.values()), merged))
    return ranks


def print_writer(name, ranks):
    for rank, (n, total, merged) in enumerate(ranks):
        print(f"{name:10s} process {rank}  {n:9d} events  {total / n:7.1f} writer instr/event")
        for fn, cost in sorted(merged.items(), key=lambda kv: -kv[1]):
            if cost / n >= 2:
                print(f"    {cost / n:7.1f}  {fn[:110]}")


def writer(tool, loops_bin, env, tmp, iters):
    """The writer's instructions per event, per rank: on the ping-pong (light calls only), on
    a ping-pong whose rank 0 polls 8 times an iteration first (a run's opening poll and 7 lean
    ones), the cost of one more failed poll (the same with 40 polls, the difference), and the
    polling loop, whose number of polls an iteration valgrind's scheduling decides."""
    print("writer instructions per event (callgrind, TraceWriter::drain_segment inclusive), per rank\n")
    print_writer("pingpong8", writer_run(tool, loops_bin, env, tmp / "pingpong8",
                                         [iters, 0, "pingpong8"]))
    few = writer_run(tool, loops_bin, env, tmp / "polls8", [iters, 0, "polls", 8])
    many = writer_run(tool, loops_bin, env, tmp / "polls40", [iters, 0, "polls", 40])
    print_writer("polls8", few)
    extra = many[0][0] - few[0][0]
    print(f"a failed poll of a run (rank 0, 40 polls an iteration against 8): "
          f"{(many[0][1] - few[0][1]) / extra:.1f} writer instr/poll")
    for fn in sorted(many[0][2], key=lambda f: few[0][2].get(f, 0) - many[0][2][f]):
        d = (many[0][2][fn] - few[0][2].get(fn, 0)) / extra
        if d >= 1:
            print(f"    {d:7.1f}  {fn[:110]}")
    print_writer("iprobe", writer_run(tool, loops_bin, env, tmp / "iprobe", [iters, 0, "iprobe"]))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--build", default=str(ROOT / "build"))
    ap.add_argument("--iters", type=int, default=20000, help="ping-pong iterations (iprobe: 1/4)")
    ap.add_argument("--lib", help="the capture library to measure (default: the build's)")
    ap.add_argument("--lines", help="shims to break down per source line, e.g. MPI_Send,MPI_Recv")
    ap.add_argument("--halo2d", metavar="ARGS", help='example_halo2d arguments, e.g. "512 400 1"')
    ap.add_argument("--writer", action="store_true",
                    help="the writer's instructions per event instead of the shims' per call")
    args = ap.parse_args()
    if not shutil.which("valgrind"):
        raise SystemExit("capture_instr.py: valgrind is not installed")
    build = pathlib.Path(args.build)
    tool = build / "tools/encore/encore"
    loops_bin = build / "bench/bench_capture_loops"
    env = {"ENCORE_DUMP_LIB": str(pathlib.Path(args.lib).resolve())} if args.lib else {}
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="encore-instr-"))
    if args.halo2d:
        halo2d(build, tool, env, tmp, args.halo2d.split(), args.lines)
        shutil.rmtree(tmp, ignore_errors=True)
        return
    if args.writer:
        writer(tool, loops_bin, env, tmp, args.iters)
        shutil.rmtree(tmp, ignore_errors=True)
        return
    print("tool instructions per call (callgrind), per rank\n")
    for loop in ("pingpong8", "iprobe"):
        out = tmp / loop
        out.mkdir()
        run([str(tool), "record", "-o", str(out / "trace"), "--quiet", "--", "mpiexec", "-n", "2",
             "valgrind", "--tool=callgrind", f"--callgrind-out-file={out}/cg.%p",
             str(loops_bin), str(args.iters), "0", loop], env=env)
        for rank, f in enumerate(sorted(out.glob("cg.*"), key=lambda p: int(p.suffix[1:]))):
            counts = per_call(f)
            for fn, (calls, instr, mpi) in sorted(counts.items()):
                if calls >= 1000:
                    print(f"{loop:10s} process {rank}  {fn:12s} {calls:8d} calls  {instr:7.0f} instr/call"
                          f"  (the MPI call itself {mpi:.0f})")
            print_lines(f, counts, args.lines)
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
