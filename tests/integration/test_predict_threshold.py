"""The eager/rendezvous threshold S that `encore predict` fits from a recording agrees with what
MPICH did in the same run: test_late_receives posts every receive 2 ms late and notes, inside
the program, whether its MPI_Send came back first (eager) or waited. The fitted S must lie
between the largest size that went eagerly and the smallest that waited, and the fit must say
how many sends it took each from."""
import json
import os
import pathlib
import re
import shutil
import tempfile
import unittest

import harness

PROGRAMS = pathlib.Path(os.environ.get("ENCORE_TEST_PROGRAMS", "build/tests/programs"))


class PredictThreshold(unittest.TestCase):
    def setUp(self):
        harness.TMP_ROOT.mkdir(parents=True, exist_ok=True)
        self.root = pathlib.Path(tempfile.mkdtemp(prefix="threshold-", dir=harness.TMP_ROOT))

    def tearDown(self):
        shutil.rmtree(self.root, ignore_errors=True)

    def test_fitted_threshold_matches_what_the_sends_did(self):
        trace = self.root / "t"
        p = harness.record(trace, 2, str(PROGRAMS / "test_late_receives"), timeout=120)
        seen = {int(n): how for n, how in re.findall(r"size (\d+) (eager|waited)", p.stdout)}
        self.assertEqual(len(seen), 13, p.stdout)
        eager = [n for n, how in seen.items() if how == "eager"]
        waited = [n for n, how in seen.items() if how == "waited"]
        # The program's own view must be a threshold: every eager size below every waiting one.
        if eager and waited:
            self.assertLess(max(eager), min(waited), p.stdout)
        doc = json.loads(harness.run([harness.TOOL, "predict", trace, "--json"]).stdout)
        S, fit = doc["params"]["S"], doc["fit"]
        if eager:
            self.assertGreaterEqual(S, max(eager), fit["notes"])
            self.assertGreaterEqual(fit["threshold_eager"], 1)
            self.assertGreaterEqual(fit["largest_eager_bytes"], max(eager))
        if waited:
            self.assertLess(S, min(waited), fit["notes"])
            self.assertGreaterEqual(fit["threshold_waiting"], 3)
            self.assertLessEqual(fit["smallest_waiting_bytes"], min(waited))
        text = harness.run([harness.TOOL, "predict", trace]).stdout
        self.assertRegex(text, r"S from \d+ blocking sends whose receive was posted late")


if __name__ == "__main__":
    unittest.main()
