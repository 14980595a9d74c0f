"""A light MPI_Recv that may wait while its thread has events the writer has not encoded first
probes for its message and, not finding it, does a slice of the writer's work
(TraceWriter::help) before the PMPI_Recv (LightCall::recv_call). The application must see
exactly what MPI_Recv gives (statuses, MPI_ANY_SOURCE and MPI_ANY_TAG, MPI_STATUS_IGNORE,
MPI_PROC_NULL, a derived datatype, error codes under an error handler that returns, which must
run once an error: the program checks them itself), and the trace must hold the same events
as with the lean paths off (ENCORE_LEAN=0, every receive a plain PMPI_Recv through a Call),
timings aside."""
import os
import re

import harness
from test_capture_light_calls import events

PROGRAMS = os.environ.get("ENCORE_TEST_PROGRAMS", "build/tests/programs")
PROGRAM = f"{PROGRAMS}/test_capture_recv_wait"
ROUNDS = 20


class RecvWait(harness.TempDirTest):
    def test_program_checks_pass_untraced(self):
        out = harness.mpirun(2, PROGRAM, ROUNDS, 500)
        self.assertIn(f"{ROUNDS} rounds, 0 failures", out.stdout)

    def test_same_events_as_plain_receives(self):
        shown = []
        per_round = 0
        for lean in ("1", "0"):
            trace = self.tmp / f"lean{lean}"
            rec = harness.record(trace, 2, PROGRAM, ROUNDS, 500, options=("--flush-ms", "10"),
                                 env={"ENCORE_LEAN": lean})
            self.assertIn(f"{ROUNDS} rounds, 0 failures", rec.stdout)
            per_round = int(re.search(r"(\d+) receives a round", rec.stdout).group(1))
            # MPICH numbers each error it raises: MPI_Error_class's argument differs too.
            shown.append([[re.sub(r"errorcode=\d+", "errorcode=_", line)
                           for line in events(trace, r)] for r in (0, 1)])
        for rank in (0, 1):
            lean, full = shown[0][rank], shown[1][rank]
            self.assertEqual(len(lean), len(full), f"rank {rank}")
            for i, (a, b) in enumerate(zip(lean, full)):
                self.assertEqual(a, b, f"rank {rank}, line {i}")
        # Rank 1's receives are all there (nine a round, ten where a tag above MPI_TAG_UB
        # can be tried), with their statuses.
        receives = [line for line in shown[0][1] if " MPI_Recv " in line]
        self.assertEqual(len(receives), per_round * ROUNDS)
        self.assertEqual(sum("tag=6" in line and "src=0" in line for line in receives), ROUNDS)


if __name__ == "__main__":
    harness.main()
