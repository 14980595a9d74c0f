"""Which clock the capture reads (`encore record --clock`, ENCORE_CLOCK; user guide, "Which
clock"): the TSC where the kernel uses it, or where it is invariant and found in step with
CLOCK_MONOTONIC on every CPU the rank may run on (virtual machines on kvm-clock), else
CLOCK_MONOTONIC; the manifest says which and why. The check moves the loading thread to each of
its CPUs and must leave its affinity as it found it."""
import json
import os
import pathlib
import re
import unittest

import harness


def kernel_clocksource():
    p = pathlib.Path("/sys/devices/system/clocksource/clocksource0/current_clocksource")
    return p.read_text().strip() if p.exists() else "unknown"


def tsc_invariant():
    for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("flags"):
            flags = line.split()
            return "constant_tsc" in flags and "nonstop_tsc" in flags
    return False


X86 = os.uname().machine == "x86_64"


class CaptureClock(harness.TempDirTest):
    def record(self, name, *options, env=None):
        trace = self.tmp / name
        p = harness.record(trace, 2, harness.example("ring"), 2, 100, options=options, env=env)
        return json.loads((trace / "manifest.json").read_text())["clock"], p

    @unittest.skipUnless(X86, "the TSC is x86-64's")
    def test_auto_takes_the_tsc_where_the_kernel_does_or_where_it_is_checked(self):
        clock, _ = self.record("auto")
        if kernel_clocksource() == "tsc" and tsc_invariant():
            self.assertEqual(clock["source"], "tsc", clock)
            self.assertEqual(clock["why"], "the kernel's clocksource is the TSC")
        elif not tsc_invariant():
            self.assertEqual(clock["source"], "monotonic", clock)
            self.assertIn("does not say its TSC is invariant", clock["why"])
        else:
            # The check ran: it names the kernel's clocksource and every CPU it visited.
            ncpus = min(len(os.sched_getaffinity(0)), 64)
            m = re.fullmatch(r"kernel clocksource (\S+); TSC against CLOCK_MONOTONIC on (\d+) "
                             r"CPUs?: at most (\d+) ns apart \(CPU \d+\)", clock["why"])
            self.assertIsNotNone(m, clock)
            self.assertEqual(m.group(1), kernel_clocksource())
            self.assertEqual(int(m.group(2)), ncpus)
            # In step within 1 us: the TSC (beyond that, the reads' uncertainty decides).
            if int(m.group(3)) <= 1000:
                self.assertEqual(clock["source"], "tsc", clock)

    def test_monotonic_as_asked(self):
        clock, _ = self.record("mono", "--clock", "monotonic")
        self.assertEqual(clock["source"], "monotonic")
        self.assertEqual(clock["why"], "CLOCK_MONOTONIC as asked")

    @unittest.skipUnless(X86, "the TSC is x86-64's")
    def test_tsc_as_asked(self):
        clock, _ = self.record("tsc", "--clock", "tsc")
        self.assertEqual(clock["source"], "tsc")
        self.assertEqual(clock["why"], "the TSC as asked, unchecked")

    def test_an_unknown_variable_value_is_named_and_auto_used(self):
        clock, p = self.record("bogus", env={"ENCORE_CLOCK": "sundial"})
        self.assertIn("encore: ignoring ENCORE_CLOCK=sundial (auto, tsc or monotonic)", p.stderr)
        self.assertNotIn("as asked", clock["why"])

    def test_a_bad_option_is_a_usage_error(self):
        p = harness.run([harness.TOOL, "record", "-o", self.tmp / "bad", "--clock", "sundial",
                         "--", "true"], check=False)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("--clock", p.stderr)

    @unittest.skipUnless(X86 and harness.DUMP_LIB, "needs the TSC and the capture library's path")
    def test_the_check_leaves_the_affinity_as_it_found_it(self):
        # The library's load runs the check (it chooses the clock before main); a program
        # started on a subset of the CPUs must find that subset, not the last CPU visited.
        cpus = sorted(os.sched_getaffinity(0))
        script = "import os; print(sorted(os.sched_getaffinity(0)))"
        for subset in ({cpus[0]}, set(cpus)):
            want = sorted(subset)
            p = harness.run(["taskset", "-c", ",".join(map(str, want)), "python3", "-c", script],
                            env={"LD_PRELOAD": harness.DUMP_LIB, "ENCORE_CLOCK": "auto"})
            self.assertEqual(p.stdout.strip(), str(want), p.stderr)


if __name__ == "__main__":
    harness.main()
