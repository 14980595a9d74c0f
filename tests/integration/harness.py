"""Shared helpers for the integration tests: run examples under mpiexec, record them with
`encore record`, and read what the tool prints. Standard library only."""
import math
import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import unittest

TOOL = os.environ.get("ENCORE_TOOL", "encore")
DUMP_LIB = os.environ.get("ENCORE_DUMP_LIB", "")
EXAMPLES = pathlib.Path(os.environ.get("ENCORE_EXAMPLES", "build/examples"))
MPIEXEC = os.environ.get("MPIEXEC", "mpiexec")
TMP_ROOT = pathlib.Path(os.environ.get("ENCORE_TEST_TMP", tempfile.gettempdir()))


def example(name):
    return str(EXAMPLES / f"example_{name}")


def run(args, timeout=300, check=True, env=None, **kw):
    """Runs a command; returns CompletedProcess with text stdout/stderr. On a timeout the
    whole process group goes (mpiexec's ranks with it), so no busy-polling rank outlives a
    test."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=full_env, start_new_session=True, **kw)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise
    p = subprocess.CompletedProcess(args, proc.returncode, out, err)
    if check and p.returncode != 0:
        raise AssertionError(f"{' '.join(map(str, args))} exited {p.returncode}\n"
                             f"stdout:\n{p.stdout}\nstderr:\n{p.stderr}")
    return p


def mpirun(n, program, *args, **kw):
    return run([MPIEXEC, "-n", str(n), program, *map(str, args)], **kw)


def record(trace_dir, n, program, *args, options=(), **kw):
    """`encore record -o trace_dir [options] -- mpiexec -n N program args`."""
    return run([TOOL, "record", "-o", str(trace_dir), *options, "--", MPIEXEC, "-n", str(n),
                program, *map(str, args)], **kw)


def _syncs(rank):
    """A manifest rank entry's MPI_Init and MPI_Finalize clock estimates, if it has both in order."""
    cs = rank.get("clock_sync", {})
    init, end = cs.get("init"), cs.get("finalize")
    return (init, end) if init and end and end["at_ns"] > init["at_ns"] else None


def offset_at(rank, t):
    """RankInfo::offset_at: the clock offset at time t of a rank (manifest entry), interpolated
    between its two estimates, held outside them (the same double arithmetic as libtime)."""
    s = _syncs(rank)
    if not s:
        return rank["clock_offset_ns"]
    init, end = s
    if t <= init["at_ns"]:
        return init["offset_ns"]
    if t >= end["at_ns"]:
        return end["offset_ns"]
    x = (t - init["at_ns"]) / (end["at_ns"] - init["at_ns"]) * float(end["offset_ns"] - init["offset_ns"])
    return init["offset_ns"] + (math.floor(x + 0.5) if x >= 0 else -math.floor(-x + 0.5))


def lowest_offset(rank):
    s = _syncs(rank)
    return min(s[0]["offset_ns"], s[1]["offset_ns"]) if s else rank["clock_offset_ns"]


def digests(stdout):
    """{rank: (recv, compute)} from the examples' `digest rank=R recv=X compute=Y` lines."""
    out = {}
    for m in re.finditer(r"^digest rank=(\d+) recv=([0-9a-f]{16}) compute=([0-9a-f]{16})$",
                         stdout, re.M):
        out[int(m.group(1))] = (m.group(2), m.group(3))
    return out


class TempDirTest(unittest.TestCase):
    """A test case with a fresh scratch directory per test."""

    def setUp(self):
        TMP_ROOT.mkdir(parents=True, exist_ok=True)
        self.tmp = pathlib.Path(tempfile.mkdtemp(prefix=self.id().split(".")[-1] + "-",
                                                 dir=TMP_ROOT))

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)


def main():
    unittest.main(verbosity=2)
