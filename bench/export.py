#!/usr/bin/env python3
"""Export benchmarks: `encore export` throughput in events per second for each format on a large
synthetic trace, and its peak memory at two trace sizes (streaming: memory must not grow with
the trace).

  bench/export.py [--build DIR] [--iterations N] [--rounds R] [--formats simgrid,chrome,otf2,dumpi]

The trace is hand-made by tests/programs/test_make_trace (2 ranks, per iteration and rank:
irecv, isend, waitall, compute, an allreduce every 16 iterations). Formats are alternated
(A B A B) and reported as median [min .. max] of rates over wall-clock time and over the
export's own CPU time (the one to trust on a loaded machine); peak RSS comes from the child's
getrusage.
"""
import argparse
import json
import os
import pathlib
import shutil
import subprocess
import tempfile
import time

from benchlib import PageReportingOff, add_page_reporting_flag, fmt, run

ROOT = pathlib.Path(__file__).resolve().parent.parent


def timed_export(tool, fmt_name, trace, out):
    """Wall seconds, CPU seconds and peak RSS (MiB) of one `encore export` run."""
    if out.exists():
        shutil.rmtree(out) if out.is_dir() else out.unlink()
    t0 = time.perf_counter()
    p = subprocess.Popen([str(tool), "export", "--to", fmt_name, str(trace), str(out)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _, _, usage = os.wait4(p.pid, 0)
    seconds = time.perf_counter() - t0
    err = p.stderr.read()
    if p.returncode not in (0, None) or err.strip():
        raise SystemExit(f"export to {fmt_name} failed:\n{err}")
    return seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--build", default=str(ROOT / "build"))
    ap.add_argument("--iterations", type=int, default=100000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--formats", default="simgrid,chrome,otf2,dumpi")
    add_page_reporting_flag(ap)
    args = ap.parse_args()
    with PageReportingOff(keep=args.keep_page_reporting):
        return measure(args)


def measure(args):
    """The benchmark itself, which main() runs with free page reporting off."""
    build = pathlib.Path(args.build)
    tool, make = build / "tools/encore/encore", build / "tests/programs/test_make_trace"
    formats = args.formats.split(",")
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="encore-export-bench-"))
    try:
        sizes = {}
        for label, n in (("small", args.iterations // 4), ("large", args.iterations)):
            trace = tmp / label
            run([str(make), str(trace), "synthetic", str(n)])
            events = sum(r["events"] for r in json.loads((trace / "manifest.json").read_text())["ranks"])
            sizes[label] = (trace, events)
        trace, events = sizes["large"]
        print(f"synthetic trace: {events} events, "
              f"{sum(f.stat().st_size for f in trace.iterdir()) / 2**20:.1f} MiB on disk")
        rates = {f: [] for f in formats}
        cpu_rates = {f: [] for f in formats}
        rss = {f: {} for f in formats}
        for _ in range(args.rounds):
            for f in formats:
                s, cpu, peak = timed_export(tool, f, trace, tmp / f"out-{f}")
                rates[f].append(events / s / 1e3)
                cpu_rates[f].append(events / cpu / 1e3)
                rss[f]["large"] = max(rss[f].get("large", 0), peak)
        for f in formats:
            s_trace, s_events = sizes["small"]
            _, _, peak = timed_export(tool, f, s_trace, tmp / f"out-small-{f}")
            rss[f]["small"] = peak
            out = tmp / f"out-{f}"
            size = sum(p.stat().st_size for p in out.rglob("*")) if out.is_dir() else out.stat().st_size
            print(f"{f:8} wall {fmt(rates[f], ' kevents/s')}  per CPU second "
                  f"{fmt(cpu_rates[f], ' kevents/s')}")
            print(f"{'':8} output {size / 2**20:.1f} MiB, peak RSS {rss[f]['small']:.1f} MiB at "
                  f"{s_events} events, {rss[f]['large']:.1f} MiB at {events} events")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
