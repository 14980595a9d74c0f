#!/usr/bin/env python3
"""Accuracy of `encore predict` on the examples at 2 ranks (one per core), against plain runs.

For each example, with runs alternated (plain, recorded, plain, ...) and medians [min .. max]:
  plain     the uninstrumented run: mpiexec's wall time minus that of `mpiexec -n 2 true`
            (so process start-up is not counted; MPI_Init is, as in the trace);
  model     each model with compute as captured (no replay): the models' own error;
  replayed  every rank replayed (`encore replay -o`), both models;            goal <= 1 %
  one rank  rank 0 replayed, rank 1 inferred from it;                         goal <= 3 %
  slower    replays with the replaying process in a CPU-quota cgroup (50 % of a core, 10 ms
            period), against plain runs with every rank limited the same way; goal <= 5 %.
Parts that need what this machine or build lacks say so and are skipped.
Usage: bench/predict_accuracy.py --build build [--runs 5] [--examples halo2d,ring]"""
import argparse
import json
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

CGROUP_CPU = pathlib.Path("/sys/fs/cgroup/cpu")
QUOTA = (5000, 10000)  # us of CPU per period: 50 % of a core


def run(cmd, check=True, **kw):
    p = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=900, **kw)
    if check and p.returncode != 0:
        raise SystemExit(f"{' '.join(map(str, cmd))} failed ({p.returncode}):\n{p.stderr}")
    return p


def wall(cmd):
    t0 = time.monotonic()
    run(cmd)
    return time.monotonic() - t0


def spread(values):
    return f"{statistics.median(values):+7.2f} % [{min(values):+.2f} .. {max(values):+.2f}]"


def seconds(values):
    return f"{statistics.median(values):.4f} s [{min(values):.4f} .. {max(values):.4f}]"


def replay_writes_profiles(tool):
    """`encore replay -o` exists once its help no longer says profiles are not written yet."""
    text = run([tool, "replay", "--help"], check=False).stdout
    return "-o" in text and "not written yet" not in text


def cgroup_usable():
    try:
        probe = CGROUP_CPU / f"encore-probe-{os.getpid()}"
        probe.mkdir()
        (probe / "cpu.cfs_period_us").write_text(str(QUOTA[1]))
        (probe / "cpu.cfs_quota_us").write_text(str(QUOTA[0]))
        probe.rmdir()
        return True
    except OSError as e:
        print(f"slower: skipped, cannot use a CPU-quota cgroup here ({e})")
        return False


def limited(cmd, tag):
    """A command run in its own CPU-quota cgroup (one per process: each rank limited alike)."""
    script = (f'g={CGROUP_CPU}/encore-{tag}-$$; mkdir -p "$g"; '
              f'echo {QUOTA[1]} > "$g/cpu.cfs_period_us"; echo {QUOTA[0]} > "$g/cpu.cfs_quota_us"; '
              f'echo $$ > "$g/cgroup.procs"; exec "$@"')
    return ["sh", "-c", script, "limited", *map(str, cmd)]


def cleanup_cgroups():
    for g in CGROUP_CPU.glob("encore-*"):
        try:
            g.rmdir()
        except OSError:
            pass


def predict(tool, trace, model, profiles=()):
    args = [tool, "predict", trace, "--json", "--model", model]
    if profiles:
        args += ["--replay", *profiles]
    return json.loads(run(args).stdout)["predicted_total_s"]


def replay(tool, trace, rank, out, program, limit=False):
    cmd = [tool, "replay", "--rank", rank, trace, "-o", out, "--", program]
    run(limited(cmd, f"replay{rank}") if limit else cmd)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--examples", default="halo2d,ring,collectives")
    a = ap.parse_args()
    build = pathlib.Path(a.build).resolve()
    tool = build / "tools/encore/encore"
    mpiexec = shutil.which("mpiexec")
    with_replay = replay_writes_profiles(tool)
    if not with_replay:
        print("replayed, one rank, slower: skipped, `encore replay -o` does not write profiles "
              "in this build")
    with_cgroup = with_replay and cgroup_usable()
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="predict-accuracy-"))
    try:
        for name in a.examples.split(","):
            program = build / "examples" / f"example_{name}"
            err = {k: [] for k in ("model loggps", "model logged", "replayed loggps",
                                   "replayed logged", "one rank loggps", "slower loggps")}
            plain_s = []
            for i in range(a.runs):
                base = wall([mpiexec, "-n", 2, "true"])
                plain = wall([mpiexec, "-n", 2, program]) - base
                plain_s.append(plain)
                trace = tmp / f"{name}-{i}"
                run([tool, "record", "-o", trace, "--", mpiexec, "-n", 2, program])
                for model in ("loggps", "logged"):
                    err[f"model {model}"].append(100 * (predict(tool, trace, model) - plain) / plain)
                if with_replay:
                    profiles = []
                    for r in (0, 1):
                        replay(tool, trace, r, tmp / f"{name}-{i}-p{r}", program)
                        profiles.append(tmp / f"{name}-{i}-p{r}")
                    for model in ("loggps", "logged"):
                        err[f"replayed {model}"].append(
                            100 * (predict(tool, trace, model, profiles) - plain) / plain)
                    err["one rank loggps"].append(
                        100 * (predict(tool, trace, "loggps", profiles[:1]) - plain) / plain)
                if with_cgroup:
                    slow_base = wall(limited([mpiexec, "-n", 2, "true"], "base"))
                    slow_plain = wall([mpiexec, "-n", 2, *limited([program], "rank")]) - slow_base
                    replay(tool, trace, 0, tmp / f"{name}-{i}-slow", program, limit=True)
                    err["slower loggps"].append(
                        100 * (predict(tool, trace, "loggps", [tmp / f"{name}-{i}-slow"]) -
                               slow_plain) / slow_plain)
                    cleanup_cgroups()
                shutil.rmtree(trace, ignore_errors=True)
            print(f"{name}: plain {seconds(plain_s)}")
            for k, v in err.items():
                if v:
                    print(f"  {k:<16} error {spread(v)}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        if with_cgroup:
            cleanup_cgroups()


if __name__ == "__main__":
    sys.exit(main())
