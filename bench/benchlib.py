"""What the benchmark scripts share: running a command, reading the loops' own timings, and
printing a median with its spread."""
import os
import re
import statistics
import subprocess


def run(cmd, env=None):
    full = dict(os.environ, **(env or {}))
    p = subprocess.run(cmd, capture_output=True, text=True, env=full, timeout=900)
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(map(str, cmd))} failed ({p.returncode}):\n{p.stderr}")
    return p.stdout


def loops(out):
    """{loop name: ns per iteration} from bench_capture_loops' output."""
    return {m.group(1): float(m.group(2))
            for m in re.finditer(r"loop=(\w+) iters=\d+ ns_per_iter=([\d.]+)", out)}


def fmt(values, unit="", digits=1):
    m, lo, hi = statistics.median(values), min(values), max(values)
    return f"{m:10.{digits}f}{unit} [{lo:.{digits}f} .. {hi:.{digits}f}]"
