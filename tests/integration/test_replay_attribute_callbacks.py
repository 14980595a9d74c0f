"""Attribute copy and delete callbacks in the replay: the program prints every callback call
(key, value, extra state) on communicators and datatypes, at MPI_Comm_set_attr replacing a
value, MPI_Comm_delete_attr, MPI_Comm_dup, MPI_Comm_free, MPI_Type_dup, MPI_Type_delete_attr,
MPI_Type_free and MPI_Finalize. Recorded at 2 ranks, each rank replayed alone must print
exactly its lines of the recorded run, in the same order."""
import os

import harness

PROGRAM = os.path.join(os.environ.get("ENCORE_TEST_PROGRAMS", "build/tests/programs"),
                       "test_attribute_callbacks")


def rank_lines(stdout, rank):
    return [l for l in stdout.splitlines() if l.startswith(f"rank {rank} ")]


class ReplayAttributeCallbacks(harness.TempDirTest):
    def replay(self, trace, rank, *args):
        return harness.run([harness.TOOL, "replay", "--rank", str(rank), str(trace), "--",
                            PROGRAM, *args], check=False, timeout=120)

    def test_callbacks_run_as_recorded(self):
        trace = self.tmp / "callbacks"
        real = harness.record(trace, 2, PROGRAM)
        for rank in range(2):
            recorded = rank_lines(real.stdout, rank)
            # The program's own calls reached MPI's callbacks: copies, deletes, finalize.
            self.assertIn(f"rank {rank} copy k0 extra=plus in=10 out=110", recorded)
            self.assertIn(f"rank {rank} type copy k4 extra=type in=14 out=1014", recorded)
            finalize = recorded.index(f"rank {rank} finalizing")
            self.assertGreater(len(recorded) - finalize, 2, recorded)
            out = self.replay(trace, rank)
            self.assertEqual(out.returncode, 0, out.stderr)
            self.assertEqual(out.stdout.splitlines(), recorded)

    def test_mpi_call_from_a_callback_is_refused(self):
        # The recorded run's calls from inside MPI were not recorded: the replay says so.
        trace = self.tmp / "nested"
        real = harness.record(trace, 2, PROGRAM, "nested")
        self.assertIn("rank 0 copy sees size 2", real.stdout)
        out = self.replay(trace, 0, "nested")
        self.assertEqual(out.returncode, 86, out.stderr)
        self.assertIn("MPI_Comm_size called from an attribute callback: not implemented yet",
                      out.stderr)

    def test_divergence_on_free_runs_no_delete_callback(self):
        # The program frees the other communicator than the recorded MPI_Comm_free: reported
        # as a divergence before the freed communicator's delete callbacks run.
        trace = self.tmp / "callbacks"
        real = harness.record(trace, 2, PROGRAM)
        recorded = rank_lines(real.stdout, 0)
        self.assertIn("rank 0 freeing dup", recorded)
        freeing = recorded.index("rank 0 freeing dup")
        self.assertIn(" delete ", recorded[freeing + 1])  # MPI ran dup's delete callback there
        out = self.replay(trace, 0, "swap")
        self.assertEqual(out.returncode, 86, out.stderr)
        self.assertRegex(out.stderr, r"divergence at event \d+ of rank 0: the trace has "
                                     r"MPI_Comm_free\(comm=.*; the program called MPI_Comm_free")
        lines = out.stdout.splitlines()
        self.assertEqual(lines[:freeing], recorded[:freeing])
        self.assertEqual(lines[freeing:], ["rank 0 freeing again"])


if __name__ == "__main__":
    harness.main()
