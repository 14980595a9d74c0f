"""`encore predict` end to end on recorded examples (2 ranks): every model runs, the predicted
trace reads back with `encore stats` and `encore show`, per-rank totals add up (compute +
communication + wait = end), the seed model with compute as captured gives back the recorded
run exactly, the compensated logged model takes the waits the peers' capture overhead caused
out of it, -o never writes into a directory that holds anything, and bad input is refused with
one line and an exit code."""
import json
import pathlib
import shutil
import tempfile
import unittest

import harness

TOOL = harness.TOOL
EXAMPLES = ("ring", "halo2d", "collectives")


def tool(*args, check=True):
    return harness.run([TOOL, *map(str, args)], check=check, timeout=120)


class PredictExamples(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        harness.TMP_ROOT.mkdir(parents=True, exist_ok=True)
        cls.root = pathlib.Path(tempfile.mkdtemp(prefix="predict-", dir=harness.TMP_ROOT))
        for name in EXAMPLES:
            harness.record(cls.root / name, 2, harness.example(name))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.root, ignore_errors=True)

    def predict(self, name, *args):
        p = tool("predict", self.root / name, "--json", *args)
        self.assertEqual(p.stderr, "")
        return json.loads(p.stdout)

    def test_totals_add_up_and_trace_reads_back(self):
        for name in EXAMPLES:
            for model in ("loggps", "logged", "seed"):
                with self.subTest(example=name, model=model):
                    out = self.root / f"{name}-{model}"
                    doc = self.predict(name, "--model", model, "-o", out)
                    self.assertEqual(doc["model"], model)
                    ends = []
                    for r in doc["ranks"]:
                        self.assertEqual(r["compute"], "inferred")
                        for side in ("recorded", "predicted"):
                            t = r[side]
                            self.assertAlmostEqual(
                                t["compute_s"] + t["communication_s"] + t["wait_s"], t["end_s"],
                                delta=1e-9 * t["events"] + 1e-12, msg=f"{side} rank {r['rank']}")
                            self.assertGreaterEqual(t["wait_s"], 0)
                        ends.append(r["predicted"]["end_s"])
                    self.assertAlmostEqual(doc["predicted_total_s"], max(ends), delta=1e-12)
                    # The program's span leaves out MPI_Init and MPI_Finalize: inside the total.
                    self.assertGreater(doc["predicted_program_s"], 0)
                    self.assertLess(doc["predicted_program_s"], doc["predicted_total_s"])
                    manifest = json.loads((out / "manifest.json").read_text())
                    self.assertEqual(manifest["kind"], "predicted")
                    self.assertEqual(manifest["options"]["prediction"]["model"], model)
                    stats = json.loads(tool("stats", out, "--json").stdout)
                    for r, s in zip(doc["ranks"], stats["ranks"]):
                        p = r["predicted"]
                        self.assertEqual(s["events"], p["events"])
                        self.assertAlmostEqual(s["wall_ns"] * 1e-9, p["end_s"], delta=1e-9)
                        self.assertAlmostEqual(s["compute_ns"] * 1e-9, p["compute_s"],
                                               delta=1e-9 * p["events"])
                    self.assertIn("MPI_Finalize", tool("show", out).stdout)

    def test_seed_model_without_profiles_gives_back_the_recording(self):
        for name in EXAMPLES:
            with self.subTest(example=name):
                doc = self.predict(name, "--model", "seed")
                self.assertAlmostEqual(doc["predicted_total_s"], doc["recorded_total_s"],
                                       delta=1e-6 * doc["recorded_total_s"])
                self.assertAlmostEqual(doc["predicted_program_s"], doc["recorded_program_s"],
                                       delta=1e-6 * doc["recorded_program_s"])
                self.assertLess(doc["recorded_program_s"], doc["recorded_total_s"])

    def test_params_file_and_text_summary(self):
        params = self.root / "params.json"
        params.write_text(json.dumps({"L": 2000, "o": 300, "g": 0, "G": 0.5, "S": 4096,
                                      "gamma": 0.25}))
        doc = self.predict("ring", "--params", params)
        self.assertEqual(doc["params"]["L"], 2000)
        self.assertEqual(doc["params"]["gamma"], 0.25)
        self.assertEqual(doc["params"]["S"], 4096)
        self.assertNotIn("fit", doc)
        # A larger L makes every message later: the prediction grows.
        slow = self.root / "slow.json"
        slow.write_text(json.dumps({"L": 2e6, "o": 300, "g": 0, "G": 0.5, "S": 4096}))
        self.assertGreater(self.predict("ring", "--params", slow)["predicted_total_s"],
                           doc["predicted_total_s"])
        text = tool("predict", self.root / "ring").stdout
        self.assertRegex(text, r"predicted total: \d+\.\d+ s \(recorded \d+\.\d+ s")
        self.assertIn("fit: o from", text)
        self.assertIn("compute inferred: ranks 0 1", text)

    def test_bad_input(self):
        cases = [
            (["--model", "guess"], 2, "--model"),
            (["--params", self.root / "missing.json"], 2, "missing.json"),
            (["--replay", self.root / "halo2d"], 3, "expected a replay profile"),
            (["--params", self.root / "bad_gamma.json"], 2, "gamma"),
            (["--params", self.root / "typo.json"], 2, "Lx: not a parameter"),
        ]
        (self.root / "bad_gamma.json").write_text(json.dumps({"gamma": -1}))
        (self.root / "typo.json").write_text(json.dumps({"Lx": 5}))
        for extra, code, text in cases:
            with self.subTest(args=extra):
                p = tool("predict", self.root / "ring", *extra, check=False)
                self.assertEqual(p.returncode, code, p.stderr)
                self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
                self.assertIn(text, p.stderr)

    def test_cut_rank_named_when_the_others_wait_for_it(self):
        # Rank 0's events cut inside their first chunk: rank 1 waits for it forever in the
        # loggps model, and the one line says which file is damaged and where.
        cut = self.root / "ring-cut"
        shutil.copytree(self.root / "ring", cut)
        events = cut / "rank-00000.events"
        data = events.read_bytes()
        events.write_bytes(data[:32 + 64 + 100])  # file header, a chunk header, part of its body
        p = tool("predict", cut, check=False)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
        self.assertRegex(p.stderr, r"ranks wait on each other forever .*; the trace is damaged: "
                                   r".*rank-00000\.events: chunk 0: file ends inside the chunk "
                                   r"body")
        self.assertNotIn("rank-00001", p.stderr)

    def test_profile_of_another_recording_is_refused(self):
        # A second recording of ring: the same calls, another run. A replay profile of it
        # (which carries its recording's start time) is refused for the first recording.
        other = self.root / "ring-again"
        harness.record(other, 2, harness.example("ring"))
        prof = self.root / "ring-again-prof0"
        harness.run([TOOL, "replay", "--rank", "0", "-o", str(prof), str(other), "--",
                     harness.example("ring")], timeout=120)
        p = tool("predict", self.root / "ring", "--replay", prof, check=False)
        self.assertEqual(p.returncode, 3, p.stderr)
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
        self.assertRegex(p.stderr, r"replays the recording started at .* \(.*ring-again\), not "
                                   r"this one \(started at ")
        self.assertEqual(tool("predict", other, "--replay", prof).returncode, 0)
        # A profile given where the capture goes: not a capture, exit 3 as the guide says.
        p = tool("predict", prof, check=False)
        self.assertEqual(p.returncode, 3, p.stderr)
        self.assertIn("a replay trace; predict starts from a capture", p.stderr)

    def test_output_must_be_a_new_directory(self):
        # -o onto the capture itself, an earlier prediction, or a file: refused before anything
        # is written, and the capture still checks out whole.
        earlier = self.root / "earlier"
        tool("predict", self.root / "ring", "-o", earlier)
        afile = self.root / "afile"
        afile.write_text("x")
        for out in (self.root / "ring", earlier, afile):
            with self.subTest(out=out.name):
                before = sorted((p.name, p.stat().st_size) for p in out.parent.glob(f"{out.name}/*"))
                p = tool("predict", self.root / "ring", "-o", out, check=False)
                self.assertEqual(p.returncode, 2, p.stderr)
                self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
                self.assertIn("not an empty directory", p.stderr)
                after = sorted((p.name, p.stat().st_size) for p in out.parent.glob(f"{out.name}/*"))
                self.assertEqual(before, after)
        self.assertEqual(tool("check", self.root / "ring").returncode, 0)
        # An empty directory is fine.
        empty = self.root / "empty"
        empty.mkdir()
        tool("predict", self.root / "ring", "-o", empty)
        self.assertTrue((empty / "manifest.json").exists())


if __name__ == "__main__":
    unittest.main()
