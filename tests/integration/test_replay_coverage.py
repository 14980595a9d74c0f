"""Replay of what the first replay left out: neighbourhood collectives on Cartesian, graph and
distributed-graph communicators (blocking, nonblocking, persistent) and communicator attributes
(the large-count datatype constructors cannot be recorded yet: tests/replay_datatypes checks
them). Each program is recorded at 2 ranks and every rank replayed alone: the printed digests
(or attribute values) must be byte-identical."""
import os

import harness

PROGRAMS = os.environ.get("ENCORE_TEST_PROGRAMS", "build/tests/programs")


def replay(trace, rank, program):
    return harness.run([harness.TOOL, "replay", "--rank", str(rank), "--wtime", "recorded",
                        str(trace), "--", program], check=False, timeout=120)


class ReplayCoverage(harness.TempDirTest):
    def replay_every_rank(self, name):
        program = f"{PROGRAMS}/test_{name}"
        trace = self.tmp / name
        real = harness.record(trace, 2, program)
        outs = []
        for rank in range(2):
            out = replay(trace, rank, program)
            self.assertEqual(out.returncode, 0, out.stderr)
            self.assertNotIn("differs from the recorded run", out.stderr)
            outs.append(out)
        return real, outs

    def test_neighborhood_collectives(self):
        real, outs = self.replay_every_rank("neighbors")
        self.assertEqual(len(harness.digests(real.stdout)), 2)
        self.assertEqual(outs[0].stdout, real.stdout)

    def test_predefined_attributes(self):
        real, outs = self.replay_every_rank("attributes")
        self.assertIn("tag_ub=", real.stdout)
        # Both ranks print: each replayed rank must print its own lines of the real run.
        lines = real.stdout.splitlines()
        for out in outs:
            mine = out.stdout.splitlines()
            self.assertEqual(len(mine), len(lines) // 2)
            for line in mine:
                self.assertIn(line, lines)
        self.assertEqual(sorted(outs[0].stdout.splitlines() + outs[1].stdout.splitlines()),
                         sorted(lines))

    def test_fortran_attributes(self):
        # libmpichfort asks MPICH-internal helpers, which are never recorded.
        program = f"{PROGRAMS}/test_fortran_attributes"
        if not os.path.exists(program):
            self.skipTest("no Fortran compiler")
        real, outs = self.replay_every_rank("fortran_attributes")
        self.assertIn("tag_ub flag=T value=", real.stdout)
        self.assertEqual(sorted(outs[0].stdout.splitlines() + outs[1].stdout.splitlines()),
                         sorted(real.stdout.splitlines()))

    def test_unknown_in_degree_says_so(self):
        # After MPI_Dist_graph_create a rank's in-degree depends on the other ranks' arguments;
        # a program that never asks MPI_Dist_graph_neighbors_count leaves it out of the trace.
        program = f"{PROGRAMS}/test_neighbors"
        trace = self.tmp / "unasked"
        harness.record(trace, 2, program, "unasked")
        out = harness.run([harness.TOOL, "replay", "--rank", "0", str(trace), "--", program,
                           "unasked"], check=False, timeout=120)
        self.assertEqual(out.returncode, 86)
        self.assertRegex(out.stderr.strip().splitlines()[-1],
                         r"^encore replay: event \d+: neighborhood collective on a communicator "
                         r"from MPI_Dist_graph_create whose in-degree .*not implemented yet$")


if __name__ == "__main__":
    harness.main()
