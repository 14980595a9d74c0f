"""Each recorded rank's writer thread is named encore-writer (perf, top -H and ps -L show it
apart from the rank's own thread); a plain run has no such thread."""
import os
import re

import harness

PROGRAMS = os.environ.get("ENCORE_TEST_PROGRAMS", "build/tests/programs")
PROGRAM = f"{PROGRAMS}/test_capture_thread_names"


def names(stdout):
    return {int(r): n.split() for r, n in re.findall(r"^threads rank=(\d+):(.*)$", stdout, re.M)}


class WriterThread(harness.TempDirTest):
    def test_recorded_ranks_have_a_named_writer_thread(self):
        recorded = names(harness.record(self.tmp / "t", 2, PROGRAM).stdout)
        self.assertEqual(sorted(recorded), [0, 1])
        for rank, threads in recorded.items():
            self.assertEqual(threads.count("encore-writer"), 1, f"rank {rank}: {threads}")
        plain = names(harness.mpirun(2, PROGRAM).stdout)
        self.assertEqual(sorted(plain), [0, 1])
        for rank, threads in plain.items():
            self.assertNotIn("encore-writer", threads, f"rank {rank}")


if __name__ == "__main__":
    harness.main()
