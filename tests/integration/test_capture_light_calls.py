"""The light calls' lean path (LightCall): a light MPI_Send or MPI_Recv, or an MPI_Iprobe that
ends a lean run of failed polls by finding its message, is recorded as one fixed record whose
body the writer thread encodes and splices in at the record's body offset; a query
(MPI_Get_count, MPI_Get_elements, MPI_Type_size) encodes its body in place. A
recording that mixes such calls with calls through a Call, repeated polls and errors must
decode to exactly the events of the same program recorded with the lean paths off
(ENCORE_LEAN=0), timings aside, whether the trace was cut by the periodic flush, written by
the crash handler after a fatal signal (with and without flushes before it), or left by a
process killed with SIGKILL."""
import os
import re

import harness

PROGRAMS = os.environ.get("ENCORE_TEST_PROGRAMS", "build/tests/programs")
MIX = f"{PROGRAMS}/test_capture_light_mix"
ITERATIONS = 2000


def events(trace, rank):
    """`encore show` of one rank without the times (which differ between any two runs),
    MPICH's error codes (which number each error raised) and the event indices, with each run
    of failed polls for a message still on its way (tag 8) taken as one poll: how many polls
    it takes differs between runs."""
    show = harness.run([harness.TOOL, "show", str(trace), "--rank", str(rank)], check=False)
    assert "Segmentation" not in show.stderr, show.stderr
    text = re.sub(r"  [\d.]+ ms \+[\d.]+[mun]?s( |$)", " ", show.stdout, flags=re.M)
    text = re.sub(r" #\d+ ", " ", re.sub(r"\brc=\d+", "rc=_", text))
    lines = []
    for line in text.splitlines():
        if not (lines and line == lines[-1] and " MPI_Iprobe " in line and " tag=8 " in line):
            lines.append(line)
    return lines


class LightCalls(harness.TempDirTest):
    def recordings(self, end, flush_ms, ranks):
        """The program recorded with the lean paths on and off: each rank's events."""
        out = []
        for lean in ("1", "0"):
            trace = self.tmp / f"{end}-{flush_ms}-{lean}"
            rec = harness.run([harness.TOOL, "record", "-o", str(trace), "--quiet", "--flush-ms",
                               str(flush_ms), "--", harness.MPIEXEC, "-n", "2", MIX,
                               str(ITERATIONS), end],
                              check=False, env={"ENCORE_LEAN": lean})
            self.assertEqual(rec.returncode == 0, end == "finalize", rec.stdout + rec.stderr)
            out.append({r: events(trace, r) for r in ranks})
        return out

    def assert_same(self, lean, full, rank):
        self.assertEqual(len(lean), len(full), f"rank {rank}")
        for i, (a, b) in enumerate(zip(lean, full)):
            self.assertEqual(a, b, f"rank {rank}, line {i}")
        # The whole loop is there: its last light calls and its last polls.
        sends = sum(" MPI_Send " in line for line in lean)
        self.assertGreater(sends, 4 * ITERATIONS, f"rank {rank}")
        # The queries, with their results (a light one whose body were wrong would differ).
        for query in (" MPI_Get_count ", " MPI_Get_elements ", " MPI_Type_size "):
            self.assertGreater(sum(query in line for line in lean), ITERATIONS, (rank, query))
        # And the poll that found its message, with its status.
        found = [line for line in lean if " MPI_Iprobe " in line and " flag=1 " in line]
        self.assertEqual(len(found), 1, found)
        self.assertIn(["status={src=1 tag=8 8B}", "status=IGNORE{src=0 tag=8 8B}"][rank], found[0])

    def test_flush_cuts_between_light_records(self):
        lean, full = self.recordings("finalize", 10, (0, 1))
        for rank in (0, 1):
            self.assert_same(lean[rank], full[rank], rank)
            self.assertTrue(any("MPI_Finalize" in line for line in lean[rank]))

    def test_crash_handler_splices_light_records(self):
        # No flush before the crash: every segment of rank 1 (sealed ones included) reaches
        # the file through the signal handler.
        lean, full = self.recordings("segv", 600000, (1,))
        self.assert_same(lean[1], full[1], 1)

    def test_crash_after_flushes(self):
        lean, full = self.recordings("segv", 10, (1,))
        self.assert_same(lean[1], full[1], 1)

    def test_sigkill_leaves_what_the_flush_wrote(self):
        lean, full = self.recordings("kill", 10, (1,))
        self.assert_same(lean[1], full[1], 1)


if __name__ == "__main__":
    harness.main()
