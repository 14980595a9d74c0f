"""Sends to MPI_PROC_NULL are not checked by the replay: nothing leaves the rank, so whatever
data the program hands them, with or without a recorded hash, no mismatch is reported. A send
without a recorded hash (ENCORE_SEND_HASH=0) is not checked either, and the replay does not
fail. A send to a real peer whose data differs is still reported, once per send."""
import os
import re

import harness

PROGRAMS = os.environ.get("ENCORE_TEST_PROGRAMS", "build/tests/programs")
PROGRAM = os.path.join(PROGRAMS, "test_send_checks")
REWRITE = os.path.join(PROGRAMS, "test_rewrite_trace")
ROUNDS = 3


def replay(trace, null_fill, real_fill):
    return harness.run([harness.TOOL, "replay", "--rank", "0", str(trace), "--", PROGRAM,
                        str(ROUNDS), str(null_fill), str(real_fill)], check=False, timeout=120)


def differed(stderr):
    """How many sends the replay's closing line says differed (0 without the line)."""
    m = re.search(r"(\d+) sends differed from the recorded run", stderr)
    return int(m.group(1)) if m else 0


class ReplayProcNull(harness.TempDirTest):
    def test_proc_null_sends_are_not_checked(self):
        trace = self.tmp / "recorded"
        harness.record(trace, 2, PROGRAM, ROUNDS, 1, 100)
        # Other data to MPI_PROC_NULL, the same to rank 1: nothing differs.
        out = replay(trace, 7, 100)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertNotIn("differs from the recorded run", out.stderr)
        # Every recorded hash made wrong, and one given to each MPI_PROC_NULL send without one:
        # only the real sends (one a round) are reported, with the first one's message.
        wrong = self.tmp / "wrong-hashes"
        harness.run([REWRITE, str(trace), str(wrong), "wrong-send-hashes"])
        shown = harness.run([harness.TOOL, "show", "--rank", "0", str(wrong)]).stdout
        null_hashed = [l for l in shown.splitlines()
                       if re.search(r"MPI_(Send|Isend|Ssend|Rsend|Issend|Sendrecv) .*dest=MPI_PROC_NULL", l)
                       and "hash=" in l]
        self.assertGreaterEqual(len(null_hashed), 6 * ROUNDS, shown)
        out = replay(wrong, 1, 100)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(differed(out.stderr), ROUNDS, out.stderr)
        self.assertRegex(out.stderr, r"event \d+ \(MPI_Send\): the data sent differs from the "
                                     r"recorded run")

    def test_real_peer_mismatch_still_reported(self):
        trace = self.tmp / "recorded"
        harness.record(trace, 2, PROGRAM, ROUNDS, 1, 100)
        out = replay(trace, 1, 101)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(differed(out.stderr), ROUNDS, out.stderr)

    def test_sends_without_hashes(self):
        trace = self.tmp / "unhashed"
        harness.record(trace, 2, PROGRAM, ROUNDS, 1, 100, env={"ENCORE_SEND_HASH": "0"})
        shown = harness.run([harness.TOOL, "show", "--rank", "0", str(trace)]).stdout
        self.assertNotIn("hash=", shown)
        out = replay(trace, 7, 101)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertNotIn("differ", out.stderr)


if __name__ == "__main__":
    harness.main()
