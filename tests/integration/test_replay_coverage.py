"""Replay of what the first replay left out: neighbourhood collectives on Cartesian, graph and
distributed-graph communicators (blocking, nonblocking, persistent), communicator attributes
and datatypes from the large-count constructors. Each program is recorded at 2 ranks and every
rank replayed alone: the printed digests (or attribute values) must be byte-identical. Values
the trace holds since format 1.1 (predefined attribute values, dist-graph neighbours) are shown
by `encore show`, and a copy of the trace with other values proves the replay uses them."""
import os
import re

import harness

PROGRAMS = os.environ.get("ENCORE_TEST_PROGRAMS", "build/tests/programs")
REWRITE = os.path.join(PROGRAMS, "test_rewrite_trace")


def show(trace, rank):
    return harness.run([harness.TOOL, "show", "--rank", str(rank), str(trace)]).stdout


def rewrite(trace, out, *change):
    harness.run([REWRITE, str(trace), str(out), *map(str, change)])
    return out


def attribute_values(show_text):
    """The recorded values of the rank's MPI_Comm_get_attr calls, in call order."""
    return [int(m) for m in re.findall(r" MPI_Comm_get_attr .* value=(-?\d+)", show_text)]


def replay(trace, rank, program, *args):
    return harness.run([harness.TOOL, "replay", "--rank", str(rank), "--wtime", "recorded",
                        str(trace), "--", program, *args], check=False, timeout=120)


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

    def test_local_calls(self):
        """What is local to the process is computed by the replay on its own machine: MPI_BOTTOM
        with types built on absolute addresses (which move from run to run), MPI_Aint_add and
        _diff, MPI_Type_get_contents and _get_extent of such a type, the MPI_Aint displacements
        of MPI_Alltoallw_c and MPI_Neighbor_alltoallw at MPI_BOTTOM, predefined handles handed
        back (MPI_ERRORS_RETURN, MPI_MESSAGE_NO_PROC, MPI_GROUP_EMPTY), Fortran-kind types
        (MPI_Type_create_f90_*, used without a commit), MPI_Pack_external,
        MPI_Reduce_local (predefined operations on predefined types, and a user's operation,
        called), MPI_Alloc_mem and MPI_Buffer_detach. Each rank prints what it recorded."""
        real, outs = self.replay_every_rank("local_calls")
        for rank, out in enumerate(outs):
            mine = [l for l in real.stdout.splitlines() if l.startswith(f"r{rank} ")]
            self.assertEqual(len(mine), 11, real.stdout)
            self.assertIn(f"r{rank} f90 sizes 8 4 8 sendrecv {1 - rank + 0.5:g},"
                          f"{1 - rank + 1.5:g} count 2", mine)
            self.assertIn(f"r{rank} predefined errors_return 1 no_proc 1 group_empty 1", mine)
            # Block j from rank j (its 100 j + rank + 1); on the ring of two both neighbours
            # are the other rank, whose two messages MPICH matches in the order sent.
            o = 1 - rank
            self.assertIn(f"r{rank} bottom alltoallw {rank + 1},{101 + rank} neighbor "
                          f"{100 * o + 1},{100 * o + 2}", mine)
            self.assertEqual(out.stdout.splitlines(), mine, out.stderr)
            self.assertNotIn("differ", out.stderr)

    def test_request_status(self):
        """Data read as soon as MPI_Request_get_status says done (before the completion, or
        with none: freed), persistent and collective requests included; MPI_Isendrecv(_replace),
        whose status MPICH 4.0 leaves unset (the program passes zeros). The replay prints the
        recorded lines, which hold what each rank received."""
        real, outs = self.replay_every_rank("request_status")
        for rank, out in enumerate(outs):
            mine = [l for l in real.stdout.splitlines() if l.startswith(f"r{rank} ")]
            o = 1 - rank
            self.assertEqual(mine, [
                f"r{rank} isendrecv {10 * o + 1},{10 * o + 2},{10 * o + 3},{10 * o + 4} "
                f"replace {7 * o},{8 * o},{9 * o}",
                f"r{rank} get_status recv {100 + o} then waited, {200 + o} then freed",
                f"r{rank} get_status persistent {300 + o},{310 + o}",
                "r%d get_status iallreduce 2001" % rank], real.stdout)
            self.assertEqual(out.stdout.splitlines(), mine, out.stderr)
        # Each rank's received data is in its trace once: 16 + 12 bytes, then five ints.
        stats = harness.run([harness.TOOL, "stats", str(self.tmp / "request_status")]).stdout
        self.assertEqual(len(re.findall(r"data: received 48B \(48 B\) in 7 payloads", stats)), 2,
                         stats)

    def test_neighborhood_collectives(self):
        real, outs = self.replay_every_rank("neighbors")
        self.assertEqual(len(harness.digests(real.stdout)), 2)
        self.assertEqual(outs[0].stdout, real.stdout)
        # The weighted general dist graph (ring 0 -> 1 -> 0, edge r -> r+1 of weight 10 + r).
        for rank in range(2):
            other = 1 - rank
            self.assertRegex(show(self.tmp / "neighbors", rank),
                             rf"MPI_Dist_graph_create .* in=\[{other}\] out=\[{other}\] "
                             rf"in_weights=\[{10 + other}\] out_weights=\[{10 + rank}\]")

    def test_large_count_datatypes(self):
        # Every _c constructor; MPI_Send_c/Recv_c, Isend_c/Irecv_c, Sendrecv_c, Bcast_c,
        # Allgather_c, Ialltoall_c on them.
        real, outs = self.replay_every_rank("large_count")
        mine = harness.digests(real.stdout)
        self.assertEqual(sorted(mine), [0, 1])
        self.assertIn("type 12: size", real.stdout)
        check = harness.run([harness.TOOL, "check", str(self.tmp / "large_count")]).stdout
        self.assertEqual(len(re.findall(r"^rank \d: complete ", check, re.M)), 2, check)
        for rank in range(2):
            d = harness.run([harness.TOOL, "digest", str(self.tmp / "large_count"), "--rank",
                             str(rank), "--until-last", "MPI_Gather"]).stdout
            self.assertEqual(d.strip(), f"digest rank={rank} recv={mine[rank][0]}")
        # Rank 0 prints everything but rank 1's receive counts, and the digests.
        self.assertEqual(outs[0].stdout,
                         "".join(l for l in real.stdout.splitlines(True) if "rank 1" not in l))
        self.assertIn("rank 1 type 11: received 2", outs[1].stdout)

    def test_large_count_payload_converts_by_signature(self):
        # Stored big-endian: converting back needs each _c type's element signature.
        program = f"{PROGRAMS}/test_large_count"
        trace = self.tmp / "big"
        mine = harness.digests(harness.record(trace, 2, program,
                                              options=["--payload-order", "big"]).stdout)
        for rank in range(2):
            args = [harness.TOOL, "digest", str(trace), "--rank", str(rank), "--until-last",
                    "MPI_Gather"]
            self.assertIn(f"recv={mine[rank][0]}", harness.run(args).stdout)
            self.assertNotIn(mine[rank][0], harness.run(args + ["--as-stored"]).stdout)

    def test_predefined_attributes(self):
        real, outs = self.replay_every_rank("attributes")
        self.assertIn("tag_ub=", real.stdout)
        # The trace holds every predefined value the program printed (and the tag it used), in
        # order; its own key's value (42, printed last) is the program's, not recorded.
        for rank in range(2):
            printed = [int(v) for v in re.findall(rf"^rank {rank} (?:\w+=|self message with "
                                                  rf"tag )(-?\d+)", real.stdout, re.M)]
            self.assertEqual(printed[-1], 42)
            self.assertGreaterEqual(len(printed), 8)
            self.assertEqual(attribute_values(show(self.tmp / "attributes", rank)), printed[:-1])
        # Both ranks print: each replayed rank must print its own lines of the real run.
        lines = real.stdout.splitlines()
        for out in outs:
            mine = out.stdout.splitlines()
            self.assertEqual(len(mine), len(lines) // 2)
            for line in mine:
                self.assertIn(line, lines)
        self.assertEqual(sorted(outs[0].stdout.splitlines() + outs[1].stdout.splitlines()),
                         sorted(lines))

    def test_attribute_values_come_from_the_trace(self):
        # A cluster with another MPI_TAG_UB and MPI_UNIVERSE_SIZE: the same trace with those
        # values changed must replay with them, not with this machine's MPICH constants.
        program = f"{PROGRAMS}/test_attributes"
        trace = self.tmp / "attr"
        real = harness.record(trace, 2, program, "values")
        self.assertNotIn("tag_ub=12345", real.stdout)
        other = rewrite(trace, self.tmp / "attr-other", "attribute", "tag_ub", 12345,
                        "universe_size", 77)
        self.assertRegex(show(other, 0), r"MPI_Comm_get_attr .* value=12345")
        for rank in range(2):
            out = replay(other, rank, program, "values")
            self.assertEqual(out.returncode, 0, out.stderr)
            lines = out.stdout.splitlines()
            self.assertIn(f"rank {rank} tag_ub=12345", lines)
            self.assertIn(f"rank {rank} self_tag_ub=12345", lines)
            # Unset under this mpiexec: the other cluster's launcher sets it.
            self.assertIn(f"rank {rank} universe_size=77", lines)
            # Everything else as recorded.
            expected = [l for l in real.stdout.splitlines() if l.startswith(f"rank {rank} ")
                        and "tag_ub" not in l and "universe_size" not in l]
            self.assertEqual([l for l in lines if "tag_ub" not in l and "universe_size" not in l],
                             expected)

    def test_fortran_attributes(self):
        # libmpichfort asks an MPICH-internal helper, which libdump wraps (format 1.1).
        program = f"{PROGRAMS}/test_fortran_attributes"
        if not os.path.exists(program):
            self.skipTest("no Fortran compiler")
        real, outs = self.replay_every_rank("fortran_attributes")
        self.assertIn("tag_ub flag=T value=", real.stdout)
        self.assertEqual(sorted(outs[0].stdout.splitlines() + outs[1].stdout.splitlines()),
                         sorted(real.stdout.splitlines()))
        # libdump records libmpichfort's MPII_Comm_get_attr as MPI_Comm_get_attr events.
        trace = self.tmp / "fortran_attributes"
        for rank in range(2):
            tag_ub = re.search(rf"^rank {rank} tag_ub flag=T value=(\d+)$", real.stdout, re.M)
            self.assertEqual(attribute_values(show(trace, rank))[0], int(tag_ub.group(1)))
        other = rewrite(trace, self.tmp / "fortran-other", "attribute", "tag_ub", 4321)
        out = replay(other, 1, program)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn("rank 1 tag_ub flag=T value=4321", out.stdout.splitlines())

    def test_dist_graph_neighbours_from_the_trace(self):
        # After MPI_Dist_graph_create a rank's in-degree depends on the other ranks' arguments:
        # the capture records the rank's neighbours, so a program that never asks
        # MPI_Dist_graph_neighbors_count replays (unweighted ring 0 -> 1 -> 0).
        program = f"{PROGRAMS}/test_neighbors"
        trace = self.tmp / "unasked"
        harness.record(trace, 2, program, "unasked")
        for rank in range(2):
            shown = show(trace, rank)
            self.assertRegex(shown, rf"MPI_Dist_graph_create .* in=\[{1 - rank}\] "
                                    rf"out=\[{1 - rank}\]")
            self.assertNotIn("in_weights", shown)
            out = harness.run([harness.TOOL, "replay", "--rank", str(rank), str(trace), "--",
                               program, "unasked"], check=False, timeout=120)
            self.assertEqual(out.returncode, 0, out.stderr)

    def test_unknown_in_degree_in_a_1_0_trace_says_so(self):
        # Traces of format 1.0 hold no neighbours: the replay says what it cannot do.
        program = f"{PROGRAMS}/test_neighbors"
        trace = self.tmp / "unasked"
        harness.record(trace, 2, program, "unasked")
        old = rewrite(trace, self.tmp / "unasked-1.0", "format-1.0")
        self.assertNotIn(" in=[", show(old, 0))
        out = harness.run([harness.TOOL, "replay", "--rank", "0", str(old), "--", program,
                           "unasked"], check=False, timeout=120)
        self.assertEqual(out.returncode, 86)
        self.assertRegex(out.stderr.strip().splitlines()[-1],
                         r"^encore replay: event \d+: neighborhood collective on a communicator "
                         r"from MPI_Dist_graph_create whose in-degree .*not implemented yet$")


if __name__ == "__main__":
    harness.main()
