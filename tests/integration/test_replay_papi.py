"""PAPI counts in replay profiles (`encore replay -o DIR --papi EVENTS`): events PAPI cannot
count give one warning naming PAPI's reason and a profile without counts; countable ones (the
kernel's software events, where perf_event is allowed) land in every event's counters."""
import json
import os
import re

import harness


class ReplayPapi(harness.TempDirTest):
    def setUp(self):
        super().setUp()
        self.trace = self.tmp / "halo"
        harness.record(self.trace, 2, harness.example("halo2d"), 64, 4)

    def replay(self, prof, *options, check=True, env=None):
        return harness.run([harness.TOOL, "replay", "--rank", "0", "-o", str(prof), *options,
                            str(self.trace), "--", harness.example("halo2d"), "64", "4"],
                           check=check, env=env, timeout=120)

    def events(self, trace):
        return json.loads(harness.run([harness.TOOL, "stats", "--json", str(trace)]).stdout)[
            "ranks"][0]["events"]

    def test_unavailable_event_warns_once_and_profiles_without(self):
        prof = self.tmp / "prof"
        out = self.replay(prof, "--papi", "PAPI_TOT_INS,PAPI_NOT_AN_EVENT")
        warnings = [l for l in out.stderr.splitlines() if "PAPI counters unavailable" in l]
        self.assertEqual(len(warnings), 1, out.stderr)
        self.assertIn("PAPI_", warnings[0])
        m = json.loads((prof / "manifest.json").read_text())
        self.assertEqual(m["papi"]["requested"], ["PAPI_TOT_INS", "PAPI_NOT_AN_EVENT"])
        self.assertFalse(m["papi"]["available"])
        self.assertIn(m["papi"]["reason"], warnings[0])
        self.assertEqual(m["ranks"][0]["status"], "complete")
        self.assertEqual(self.events(prof), self.events(self.trace))
        shown = harness.run([harness.TOOL, "show", str(prof)]).stdout
        self.assertNotIn("counters=", shown)

    def test_papi_needs_a_profile(self):
        out = harness.run([harness.TOOL, "replay", "--rank", "0", "--papi", "PAPI_TOT_INS",
                           str(self.trace), "--", harness.example("halo2d"), "64", "4"],
                          check=False)
        self.assertEqual(out.returncode, 2)
        self.assertIn("give -o DIR too", out.stderr)

    def test_software_events_are_counted_per_call(self):
        prof = self.tmp / "prof"
        # The environment variable capture uses works for the replay too.
        env = dict(os.environ, ENCORE_PAPI_EVENTS="perf::TASK-CLOCK,perf::PAGE-FAULTS")
        self.replay(prof, env=env)
        m = json.loads((prof / "manifest.json").read_text())
        self.assertEqual(m["papi"]["requested"], ["perf::TASK-CLOCK", "perf::PAGE-FAULTS"])
        if not m["papi"]["available"]:
            self.skipTest("PAPI cannot count software events here: " + m["papi"]["reason"])
        shown = harness.run([harness.TOOL, "show", str(prof)]).stdout
        lines = [l for l in shown.splitlines() if re.match(r"^r\d+ t\d+ #\d+ ", l)]
        self.assertEqual(len(lines), self.events(prof))
        counts = [re.search(r"counters=\[(\d+),(\d+)\]", l) for l in lines]
        self.assertTrue(all(counts), [l for l, c in zip(lines, counts) if not c][:3])
        # Task clock: CPU ns of each compute segment (plus PAPI's own reads at its ends), so
        # the sum is positive and about the profile's compute time, never much more.
        task = sum(int(c.group(1)) for c in counts)
        compute = m["replay"]["compute_ns"]
        self.assertGreater(task, 0)
        self.assertLess(task, 1.5 * compute + 50_000 * len(lines))


if __name__ == "__main__":
    harness.main()
