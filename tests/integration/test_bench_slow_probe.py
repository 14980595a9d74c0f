"""bench_slow_probe, predict_accuracy.py's slower machine for plain runs: every compute segment
(an MPI call's return to the next call) is stretched to ENCORE_SLOW_FACTOR times its length.
test_slow_calls sleeps N x M ms between Allreduces, so at factor F its span (MPI_Init's return
to MPI_Finalize) is at least F x N x M ms, whatever the machine's load; a bad factor is refused."""
import os
import pathlib
import shutil
import tempfile
import unittest

import harness

BUILD = pathlib.Path(os.environ.get("ENCORE_BUILD_DIR", "build"))
PROBE = BUILD / "bench" / "libbench_slow_probe.so"
PROGRAM = pathlib.Path(os.environ.get("ENCORE_TEST_PROGRAMS", "build/tests/programs")) / \
    "test_slow_calls"
ITERS, MS = 10, 20


@unittest.skipUnless(PROBE.exists(), f"{PROBE} not built (ENCORE_BUILD_BENCH=OFF?)")
class SlowProbe(unittest.TestCase):
    def setUp(self):
        harness.TMP_ROOT.mkdir(parents=True, exist_ok=True)
        self.dir = pathlib.Path(tempfile.mkdtemp(prefix="slow-probe-", dir=harness.TMP_ROOT))

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def span_s(self, factor):
        out = self.dir / f"f{factor}"
        out.mkdir()
        harness.mpirun(2, PROGRAM, ITERS, MS, timeout=120,
                       env={"LD_PRELOAD": str(PROBE), "ENCORE_SPAN_DIR": str(out),
                            "ENCORE_SLOW_FACTOR": str(factor)})
        spans = [tuple(map(int, f.read_text().split())) for f in sorted(out.glob("rank-*.txt"))]
        self.assertEqual(len(spans), 2, "the probe's span files")
        return (max(f for _, f in spans) - min(i for i, _ in spans)) * 1e-9

    def test_compute_is_stretched_by_the_factor(self):
        plain = self.span_s(1)
        self.assertGreaterEqual(plain, ITERS * MS * 1e-3)
        slow = self.span_s(3)
        self.assertGreaterEqual(slow, 3 * ITERS * MS * 1e-3, f"factor 1 took {plain:.3f} s")

    def test_bad_factor_is_refused(self):
        for bad in ("0.5", "two", ""):
            p = harness.run([harness.MPIEXEC, "-n", "1", str(PROGRAM), "1", "1"], check=False,
                            timeout=60, env={"LD_PRELOAD": str(PROBE), "ENCORE_SLOW_FACTOR": bad})
            self.assertNotEqual(p.returncode, 0, bad)
            self.assertIn("ENCORE_SLOW_FACTOR must be a number in [1, 1000]", p.stderr, bad)


if __name__ == "__main__":
    harness.main()
