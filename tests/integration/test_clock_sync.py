"""Clock offsets between ranks (trace-format.md, "Clock offsets"): measured at MPI_Init and at
MPI_Finalize with a bound on their error, from the shared monotonic clock on one kernel or from
round trips (`--clock-sync round-trips`). Recorded while two busy processes compete with the
ranks for the cores, as on a loaded node, where round trips can take milliseconds: the two
estimates must still agree within their bounds and the rates' drift."""
import json
import subprocess
import sys
import unittest

import harness

ARGS = (40, 20000)  # ring: 40 laps of 160 kB
DRIFT = 100e-6  # two ranks' calibrated rates may differ by this much (measured: a few ppm)
SPIN = "import time\nend = time.time() + 60\nwhile time.time() < end: pass\n"


class ClockSync(harness.TempDirTest):
    def record_loaded(self, name, *options):
        hogs = [subprocess.Popen([sys.executable, "-c", SPIN]) for _ in range(2)]
        try:
            trace = self.tmp / name
            harness.record(trace, 2, harness.example("ring"), *ARGS, options=options)
        finally:
            for h in hogs:
                h.kill()
                h.wait()
        return json.loads((trace / "manifest.json").read_text())

    def check_consistent(self, m, method):
        r0, r1 = m["ranks"]
        self.assertEqual(r0["clock_sync"]["init"]["method"], "self")
        self.assertEqual(r0["clock_sync"]["init"]["offset_ns"], 0)
        init, end = r1["clock_sync"]["init"], r1["clock_sync"]["finalize"]
        for s in (init, end):
            self.assertEqual(s["method"], method, r1)
            self.assertGreater(s["error_ns"], 0)
        # The keys older readers use say the same.
        self.assertEqual(r1["clock_offset_ns"], init["offset_ns"])
        self.assertEqual(r1["clock_offset_end_ns"], end["offset_ns"])
        self.assertGreater(end["at_ns"], init["at_ns"])
        apart = end["at_ns"] - init["at_ns"]
        allowed = init["error_ns"] + end["error_ns"] + DRIFT * apart
        self.assertLessEqual(abs(end["offset_ns"] - init["offset_ns"]), allowed, r1["clock_sync"])
        return init, end

    def test_the_shared_clock_is_used_on_one_kernel(self):
        m = self.record_loaded("auto")
        self.assertEqual(m["options"]["clock_sync"], "auto")
        init, end = self.check_consistent(m, "shared clock")
        # Pairs of clock reads: nanoseconds to a few microseconds (a preempted pair is retried).
        self.assertLess(init["error_ns"], 50_000, init)
        self.assertLess(end["error_ns"], 50_000, end)

    def test_round_trips_bound_their_error_by_half_the_best_trip(self):
        m = self.record_loaded("trips", "--clock-sync", "round-trips")
        self.assertEqual(m["options"]["clock_sync"], "round-trips")
        self.check_consistent(m, "round trips")

    def test_a_bad_value_is_a_usage_error(self):
        p = harness.run([harness.TOOL, "record", "-o", self.tmp / "bad", "--clock-sync", "ntp",
                         "--", "true"], check=False)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("--clock-sync", p.stderr)


if __name__ == "__main__":
    harness.main()
