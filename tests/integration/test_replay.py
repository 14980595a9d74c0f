"""Replaying ranks alone: every rank of each example runs without mpiexec from its trace, the
printing rank's output is byte-identical to the real run, no send differs from the recorded
one, and a program that does something else than the trace says stops at the first divergent
call with a message naming both calls."""
import re

import harness

# (example, ranks, extra program arguments)
CASES = [
    ("ring", 2, []),
    ("ring", 4, []),
    ("collectives", 2, []),
    ("collectives", 4, []),
    ("master_worker", 2, []),
    ("master_worker", 4, ["128", "16", "256", "dynamic"]),  # arrival order varies run to run
    ("fortran_ring", 2, []),
]


def replay(trace, rank, program, *args, wtime="recorded", check=True):
    return harness.run([harness.TOOL, "replay", "--rank", str(rank), "--wtime", wtime, str(trace),
                        "--", program, *map(str, args)], check=check, timeout=120)


class Replay(harness.TempDirTest):
    def test_every_rank_alone(self):
        for name, n, args in CASES:
            with self.subTest(example=name, ranks=n):
                trace = self.tmp / f"{name}-{n}"
                real = harness.record(trace, n, harness.example(name), *args)
                for rank in range(n):
                    out = replay(trace, rank, harness.example(name), *args)
                    self.assertNotIn("sends differed", out.stderr)
                    self.assertNotIn("differs from the recorded run", out.stderr)
                    if rank == 0:
                        # Rank 0 prints every rank's digest, gathered from the others: the
                        # replay feeds it what they really sent.
                        self.assertEqual(out.stdout, real.stdout)

    def test_divergence_names_both_calls(self):
        trace = self.tmp / "ring"
        harness.record(trace, 2, harness.example("ring"), 3, 1000)
        out = replay(trace, 0, harness.example("ring"), 3, 999, check=False)
        self.assertEqual(out.returncode, 86)
        line = out.stderr.strip().splitlines()[-1]
        self.assertRegex(line, r"^encore replay: divergence at event \d+ of rank 0: the trace has "
                               r"MPI_Sendrecv\(sendcount=1000 .*\); the program called "
                               r"MPI_Sendrecv\(sendcount=999 ")
        # Another number of laps: a different call altogether.
        out = replay(trace, 0, harness.example("ring"), 4, 1000, check=False)
        self.assertEqual(out.returncode, 86)
        self.assertIn("divergence at event", out.stderr)

    def test_trace_of_another_program(self):
        trace = self.tmp / "ring"
        harness.record(trace, 2, harness.example("ring"))
        out = replay(trace, 0, harness.example("collectives"), check=False)
        self.assertEqual(out.returncode, 86)
        self.assertRegex(out.stderr, r"encore replay: divergence at event \d+ of rank 0: the trace "
                                     r"has MPI_\w+\(.*\); the program called MPI_\w+")

    def test_wrong_rank_and_missing_trace(self):
        trace = self.tmp / "ring"
        harness.record(trace, 2, harness.example("ring"))
        out = replay(trace, 5, harness.example("ring"), check=False)
        self.assertEqual(out.returncode, 2)
        self.assertIn("--rank 5", out.stderr)
        out = replay(self.tmp / "nothing", 0, harness.example("ring"), check=False)
        self.assertEqual(out.returncode, 3)
        (trace / "rank-00001.events").unlink()
        out = replay(trace, 1, harness.example("ring"), check=False)
        self.assertEqual(out.returncode, 3)
        self.assertIn("rank-00001.events", out.stderr)

    def test_unsupported_call_says_so(self):
        # halo2d builds an MPI_Type_vector: until the replay's datatype engine handles derived
        # types, the replay must stop with a clear line rather than feed wrong data.
        trace = self.tmp / "halo"
        real = harness.record(trace, 2, harness.example("halo2d"))
        out = replay(trace, 0, harness.example("halo2d"), check=False)
        if out.returncode == 0:
            self.assertEqual(out.stdout, real.stdout)
        else:
            self.assertEqual(out.returncode, 86)
            self.assertRegex(out.stderr.strip().splitlines()[-1], r"^encore replay: .*datatype")


if __name__ == "__main__":
    harness.main()
