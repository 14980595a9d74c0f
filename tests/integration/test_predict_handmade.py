"""`encore predict` end to end on a hand-made trace whose answer is known analytically
(test_make_trace's ping-pong: every call lasts 1 us; rank 0 computes 2 ms after MPI_Init, then
sends 1000 B to rank 1, whose receive is posted right after its MPI_Init), with the parameters
given in a file: L 1000 ns, o 100 ns, G 1 ns/B, S above the message (eager).

On the predicted time base (0 = the earliest MPI_Init's start):
  rank 0: Init 0..1000, compute 2 ms, Send 2001000 + o + 999 G = 2002099, Finalize to 2003099
  rank 1: Init 0..1000, Recv posted at 1000; the data leaves at 2001000, arrives after o + 999 G
          + L at 2003099, the receive ends o later at 2003199 (a receive's own cost is o: the
          other 2002099 ns of it are waiting), Finalize to 2004199.
The seed model keeps every recorded duration: its total is the recorded one, 2003000 ns."""
import json
import os
import pathlib
import shutil
import tempfile
import unittest

import harness

MAKE_TRACE = pathlib.Path(os.environ.get("ENCORE_TEST_PROGRAMS", "build/tests/programs")) / \
    "test_make_trace"


class PredictHandMade(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        harness.TMP_ROOT.mkdir(parents=True, exist_ok=True)
        cls.root = pathlib.Path(tempfile.mkdtemp(prefix="predict-hand-", dir=harness.TMP_ROOT))
        cls.trace = cls.root / "pp"
        harness.run([str(MAKE_TRACE), str(cls.trace), "pingpong", "1000", "2000000"])
        cls.params = cls.root / "params.json"
        cls.params.write_text(json.dumps({"L": 1000, "o": 100, "g": 0, "G": 1, "S": 100000}))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.root, ignore_errors=True)

    def predict(self, *args):
        p = harness.run([harness.TOOL, "predict", str(self.trace), "--json", *map(str, args)])
        return json.loads(p.stdout)

    def test_loggps_ping_pong_times(self):
        doc = self.predict("--params", self.params, "--model", "loggps")
        ends = {r["rank"]: round(r["predicted"]["end_s"] * 1e9) for r in doc["ranks"]}
        self.assertEqual(ends, {0: 2003099, 1: 2004199})
        self.assertEqual(round(doc["predicted_total_s"] * 1e9), 2004199)
        r1 = doc["ranks"][1]["predicted"]
        # The receive's own cost is o; the rest of its 2002199 ns is waiting.
        self.assertEqual(round(r1["wait_s"] * 1e9), 2002199 - 100)
        self.assertEqual(doc["params"]["S"], 100000)

    def test_larger_latency_moves_only_the_receiver(self):
        slow = self.root / "slow.json"
        slow.write_text(json.dumps({"L": 51000, "o": 100, "g": 0, "G": 1, "S": 100000}))
        doc = self.predict("--params", slow, "--model", "loggps")
        ends = {r["rank"]: round(r["predicted"]["end_s"] * 1e9) for r in doc["ranks"]}
        self.assertEqual(ends, {0: 2003099, 1: 2054199})

    def test_seed_model_gives_back_the_recorded_times(self):
        doc = self.predict("--params", self.params, "--model", "seed")
        self.assertEqual(round(doc["predicted_total_s"] * 1e9), 2003000)
        self.assertEqual(round(doc["recorded_total_s"] * 1e9), 2003000)


if __name__ == "__main__":
    unittest.main()
