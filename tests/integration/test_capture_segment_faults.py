"""The capture's segments are faulted in before the recording thread writes them: a rank that
receives 5.5 MiB of payload in 4 KiB messages (more than a 4 MiB payload segment) takes no more
page faults on its own thread while recording than a plain run does (on the old capture, one
fault per 4 KiB received: about 1,100 more). The program sleeps between its two phases, so the
writer's periodic pass finds the first segment half full and prepares the next one."""
import os
import re

import harness

PROGRAMS = os.environ.get("ENCORE_TEST_PROGRAMS", "build/tests/programs")
PROGRAM = f"{PROGRAMS}/test_capture_segment_faults"
# MPICH's own faults in these loops move by a few between runs; a page of payload is one fault.
SLACK = 32


def faults(stdout):
    m = re.search(r"^faults phase1=(\d+) phase2=(\d+)$", stdout, re.M)
    if not m:
        raise AssertionError(f"no faults line in:\n{stdout}")
    return int(m.group(1)), int(m.group(2))


class SegmentFaults(harness.TempDirTest):
    def test_recording_adds_no_page_faults_to_the_receiving_loops(self):
        plain = faults(harness.mpirun(2, PROGRAM).stdout)
        recorded = faults(harness.record(self.tmp / "t", 2, PROGRAM).stdout)
        for phase, (p, r) in enumerate(zip(plain, recorded), 1):
            self.assertLessEqual(r, p + SLACK, f"phase {phase}: recorded {r} faults, plain {p}")
        check = harness.run([harness.TOOL, "check", str(self.tmp / "t")])
        self.assertIn("complete", check.stdout)


if __name__ == "__main__":
    harness.main()
