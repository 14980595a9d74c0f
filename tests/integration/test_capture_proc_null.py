"""Sends to MPI_PROC_NULL move nothing, so the capture does not hash them (trace-format.md,
"Extras"): test_proc_null_sends makes every send-like call once to MPI_PROC_NULL, then once to
the other rank. The first round must carry no hash, the second one each; the replay accepts
the unhashed sends and still checks the others."""
import os
import re

import harness

PROGRAMS = os.environ.get("ENCORE_TEST_PROGRAMS", "build/tests/programs")
EVENT = re.compile(r"^r(\d+) t\d+ #\d+ (MPI_\w+) ")
# The program's send-like calls per round, in order (MPI_Start twice).
SENDS = ["MPI_Send", "MPI_Ssend", "MPI_Rsend", "MPI_Bsend", "MPI_Isend", "MPI_Issend",
         "MPI_Start", "MPI_Start", "MPI_Sendrecv", "MPI_Sendrecv_replace"]


class ProcNullSends(harness.TempDirTest):
    def test_only_sends_that_leave_the_rank_are_hashed(self):
        trace = self.tmp / "procnull"
        program = f"{PROGRAMS}/test_proc_null_sends"
        harness.record(trace, 2, program)
        for rank in (0, 1):
            out = harness.run([harness.TOOL, "show", str(trace), "--rank", str(rank)]).stdout
            sends = [line for line in out.splitlines()
                     if (m := EVENT.match(line)) and m.group(2) in SENDS]
            self.assertEqual([EVENT.match(l).group(2) for l in sends], SENDS + SENDS, f"rank {rank}")
            for line in sends[:len(SENDS)]:
                self.assertNotIn("hash=", line)
            for line in sends[len(SENDS):]:
                self.assertRegex(line, r" sent 64B hash=[0-9a-f]{16}")
            replayed = harness.run([harness.TOOL, "replay", "--rank", str(rank), "--wtime",
                                    "recorded", str(trace), "--", program], timeout=120)
            self.assertNotIn("differ", replayed.stderr)


if __name__ == "__main__":
    harness.main()
