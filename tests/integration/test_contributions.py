"""Collectives' contributions (format 1.4): every block of input a rank hands a collective is
hashed at capture (after the call, or before it when the input is the receive buffer, which
the call overwrites; at each MPI_Start(all) for a persistent collective), and the replay hashes
the same blocks and reports a collective whose input differs from the recorded run."""
import os
import re

import harness

PROGRAMS = os.environ.get("ENCORE_TEST_PROGRAMS", "build/tests/programs")
PROGRAM = os.path.join(PROGRAMS, "test_contributions")
ROUNDS = 2
N = 8 * 8  # bytes of N doubles

# Per round, the calls of contributions.c that carry contributions on either rank, in order,
# with the bytes of each block rank 0 and rank 1 contribute.
EXPECTED = [
    ("MPI_Bcast", [N], []),
    ("MPI_Bcast", [], [N]),
    ("MPI_Reduce", [N], [N]),
    ("MPI_Reduce", [N], [N]),              # rank 0 in place: its receive buffer, before the call
    ("MPI_Allreduce", [N], [N]),
    ("MPI_Allreduce", [N], [N]),           # in place
    ("MPI_Scan", [N], [N]),
    ("MPI_Exscan", [N], [N]),
    ("MPI_Reduce_scatter_block", [2 * N], [2 * N]),
    ("MPI_Reduce_scatter", [2 * N], [2 * N]),  # in place
    ("MPI_Gather", [], [N]),               # an in-place root sends nothing
    ("MPI_Gatherv", [N], [N]),
    ("MPI_Scatter", [2 * N], []),
    ("MPI_Scatterv", [N, N // 2], []),
    ("MPI_Allgather", [N], [N]),
    ("MPI_Allgather", [N], [N]),           # in place: the rank's own block
    ("MPI_Allgatherv", [N], [N]),
    ("MPI_Alltoall", [2 * N], [2 * N]),
    ("MPI_Alltoall", [2 * N], [2 * N]),    # in place
    ("MPI_Alltoallv", [N], [N]),           # the empty block to rank 1 is not recorded
    ("MPI_Alltoallw", [N, N], [N, N]),
    ("MPI_Neighbor_alltoall", [2 * N], [2 * N]),
    ("MPI_Neighbor_allgather", [N], [N]),
    ("MPI_Iallreduce", [N], [N]),
    ("MPI_Ibcast", [N], []),
    ("MPI_Start", [N], [N]),
    ("MPI_Startall", [N, N], [N]),         # the in-place Allreduce_init, then Bcast_init's root
    ("MPI_Startall", [], []),              # two persistent sends: send hashes, not contributions
]
COLLECTIVE = re.compile(r"\bMPI_(Bcast|Reduce|Allreduce|Scan|Exscan|Reduce_scatter_block|"
                        r"Reduce_scatter|Gather|Gatherv|Scatter|Scatterv|Allgather|Allgatherv|"
                        r"Alltoall|Alltoallv|Alltoallw|Neighbor_alltoall|Neighbor_allgather|"
                        r"Iallreduce|Ibcast|Start|Startall|Allreduce_init|Bcast_init|Barrier)\b")


def contributions(trace, rank):
    """[(function, [bytes of each contributed block])] for the rank's collective calls."""
    shown = harness.run([harness.TOOL, "show", "--rank", str(rank), str(trace)]).stdout
    out = []
    for line in shown.splitlines():
        m = COLLECTIVE.search(line)
        if m:
            out.append((m.group(0), [int(b) for b in re.findall(r"contributed (\d+)B hash=", line)]))
    return out


def replay(trace, fill):
    return harness.run([harness.TOOL, "replay", "--rank", "0", str(trace), "--", PROGRAM,
                        str(ROUNDS), str(fill)], check=False, timeout=120)


def differed(stderr):
    m = re.search(r"(\d+) collective contributions differed from the recorded run", stderr)
    return int(m.group(1)) if m else 0


class Contributions(harness.TempDirTest):
    def test_recorded_per_block(self):
        trace = self.tmp / "recorded"
        harness.record(trace, 2, PROGRAM, ROUNDS, 1)
        for rank in (0, 1):
            got = [(f, b) for f, b in contributions(trace, rank)
                   if f not in ("MPI_Allreduce_init", "MPI_Bcast_init", "MPI_Barrier")]
            want = [(f, blocks[rank]) for f, *blocks in EXPECTED] * ROUNDS
            self.assertEqual(got, want, f"rank {rank}")
        # Nothing where nothing is handed over: setting up a persistent collective, a barrier.
        for f, blocks in contributions(trace, 0):
            if f in ("MPI_Allreduce_init", "MPI_Bcast_init", "MPI_Barrier"):
                self.assertEqual(blocks, [], f)
        # Contributions are not sends: the sent-bytes count is untouched.
        stats = harness.run([harness.TOOL, "stats", "--json", str(trace)]).stdout
        self.assertIn('"contributed_bytes"', stats)

    def test_replay_checks_contributions(self):
        trace = self.tmp / "recorded"
        harness.record(trace, 2, PROGRAM, ROUNDS, 1)
        same = replay(trace, 1)
        self.assertEqual(same.returncode, 0, same.stderr)
        self.assertNotIn("differ", same.stderr)
        # Other input to every collective rank 0 contributes to: each reported, once a call
        # (MPI_Startall once a started collective), the first one by name.
        other = replay(trace, 2)
        self.assertEqual(other.returncode, 0, other.stderr)
        calls = sum(len(r0) > 0 for _, r0, _ in EXPECTED) + 1  # Startall's two requests
        self.assertEqual(differed(other.stderr), calls * ROUNDS, other.stderr)
        self.assertRegex(other.stderr, r"event \d+ \(MPI_Bcast\): the data contributed to the "
                                       r"collective differs from the recorded run \(block 1 of 1, "
                                       r"64 bytes")
        # The round's two persistent sends, started together, each checked against its own
        # hash, and its two light sends: all four differ here, none did above.
        self.assertRegex(other.stderr, rf"\b{4 * ROUNDS} sends differed from the recorded run")

    def test_stop_on_data(self):
        """--data-differs stop: the first differing input ends the replay (exit 86) with the
        warning's line, and the profile is readable up to there, marked aborted."""
        trace = self.tmp / "recorded"
        harness.record(trace, 2, PROGRAM, ROUNDS, 1)
        def args(prof, fill):
            return [harness.TOOL, "replay", "--rank", "0", "--data-differs", "stop", "-o",
                    str(prof), str(trace), "--", PROGRAM, str(ROUNDS), str(fill)]
        prof = self.tmp / "prof"
        out = harness.run(args(prof, 2), check=False, timeout=120)
        self.assertEqual(out.returncode, 86, out.stderr)
        self.assertRegex(out.stderr, r"encore replay: event (\d+) \(MPI_Bcast\): the data "
                                     r"contributed to the collective differs from the recorded "
                                     r"run \(block 1 of 1, 64 bytes; .*\) \(ENCORE_REPLAY_DATA=stop\)\n")
        self.assertNotIn("the replay goes on", out.stderr)
        check = harness.run([harness.TOOL, "check", str(prof)], check=False)
        self.assertRegex(check.stdout, r"rank 0: .*aborted")
        shown = harness.run([harness.TOOL, "show", str(prof)], check=False).stdout
        self.assertNotIn("MPI_Reduce", shown)  # nothing after the Bcast that stopped it
        same = harness.run(args(self.tmp / "prof2", 1), check=False, timeout=120)
        self.assertEqual(same.returncode, 0, same.stderr)

    def test_other_byte_order(self):
        """Hashes are of the data in the payload stream's byte order: recorded big-endian here,
        the replay converts its own data before hashing, and matches exactly when it sends
        and contributes the same values."""
        native, big = self.tmp / "native", self.tmp / "big"
        harness.record(native, 2, PROGRAM, ROUNDS, 1)
        harness.record(big, 2, PROGRAM, ROUNDS, 1, options=["--payload-order", "big"])
        shown = [harness.run([harness.TOOL, "show", "--rank", "0", str(t)]).stdout
                 for t in (native, big)]
        hashes = [re.findall(r"(?:contributed|sent) (\d+)B hash=(\w+)", s) for s in shown]
        self.assertEqual([b for b, _ in hashes[0]], [b for b, _ in hashes[1]])
        self.assertTrue(all(a != b for (_, a), (_, b) in zip(*hashes)), hashes)
        same = replay(big, 1)
        self.assertEqual(same.returncode, 0, same.stderr)
        self.assertNotIn("differ", same.stderr)
        other = replay(big, 2)
        self.assertEqual(other.returncode, 0, other.stderr)
        calls = sum(len(r0) > 0 for _, r0, _ in EXPECTED) + 1
        self.assertEqual(differed(other.stderr), calls * ROUNDS, other.stderr)
        self.assertRegex(other.stderr, rf"\b{4 * ROUNDS} sends differed from the recorded run")

    def test_intercommunicator(self):
        """On an intercommunicator the root side is the rank passing MPI_ROOT; the other ranks
        of its group and the root of MPI_Reduce and MPI_Gather contribute nothing. A
        reduce-scatter's input is the own group's blocks: on 3 ranks (groups of two and of
        one) 8 doubles on every rank, where the remote group's size would give 4 or 16."""
        program = os.path.join(PROGRAMS, "test_intercomm")
        b, rs = 32, [("MPI_Reduce_scatter_block", [64]), ("MPI_Reduce_scatter", [64])]
        root_side = [("MPI_Bcast", [b]), ("MPI_Reduce", []), ("MPI_Allreduce", [b]),
                     ("MPI_Gather", [b]), ("MPI_Scatter", [b]), ("MPI_Allgather", [b])]
        bystander = [("MPI_Bcast", []), ("MPI_Reduce", []), ("MPI_Allreduce", [b]),
                     ("MPI_Gather", [b]), ("MPI_Scatter", []), ("MPI_Allgather", [b])]
        other_side = [("MPI_Bcast", []), ("MPI_Reduce", [b]), ("MPI_Allreduce", [b]),
                      ("MPI_Gather", []), ("MPI_Scatter", []), ("MPI_Allgather", [b])]
        # MPI_Alltoall sends N doubles to each member of the remote group.
        one, two = [("MPI_Alltoall", [b])], [("MPI_Alltoall", [2 * b])]
        end = rs + [("MPI_Barrier", [])]
        cases = {2: {0: root_side + one + end, 1: other_side + one + end},
                 3: {0: root_side + one + end, 1: other_side + two + end,
                     2: bystander + one + end}}
        for n, want in cases.items():
            trace = self.tmp / f"inter{n}"
            harness.record(trace, n, program, 1)
            for rank in range(n):
                self.assertEqual(contributions(trace, rank), want[rank], f"{n} ranks, rank {rank}")
                args = [harness.TOOL, "replay", "--rank", str(rank), str(trace), "--", program]
                same = harness.run(args + ["1"], check=False, timeout=120)
                self.assertEqual(same.returncode, 0, same.stderr)
                self.assertNotIn("differ", same.stderr)
                other = harness.run(args + ["2"], check=False, timeout=120)
                self.assertEqual(other.returncode, 0, other.stderr)
                self.assertEqual(differed(other.stderr), sum(len(b) > 0 for _, b in want[rank]),
                                 other.stderr)

    def test_not_hashed_not_checked(self):
        trace = self.tmp / "unhashed"
        harness.record(trace, 2, PROGRAM, ROUNDS, 1, env={"ENCORE_SEND_HASH": "0"})
        self.assertTrue(all(b == [] for _, b in contributions(trace, 0)))
        out = replay(trace, 2)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertNotIn("differ", out.stderr)


if __name__ == "__main__":
    harness.main()
