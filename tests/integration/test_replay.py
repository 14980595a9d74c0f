"""Replaying ranks alone: every rank of each example runs without mpiexec from its trace, the
printing rank's output is byte-identical to the real run, no send differs from the recorded
one, and a program that does something else than the trace says stops at the first divergent
call with a message naming both calls."""
import glob
import json
import os
import re
import subprocess

import harness

BUILD = os.environ.get("ENCORE_BUILD_DIR", "build")
SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# (example, ranks, extra program arguments)
CASES = [
    ("ring", 2, []),
    ("ring", 4, []),
    ("halo2d", 2, []),
    ("halo2d", 4, []),
    ("collectives", 2, []),
    ("collectives", 4, []),
    ("master_worker", 2, []),
    ("master_worker", 4, ["128", "16", "256", "dynamic"]),  # arrival order varies run to run
    ("fortran_ring", 2, []),
    ("hybrid_omp", 2, []),         # OpenMP threads compute, the main thread calls MPI
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

    def test_payload_recorded_in_the_other_byte_order(self):
        # Recorded big-endian on this little-endian host (the capture converts at write time):
        # the replay converts back with each datatype's element sizes, column types included,
        # and the rank computes exactly what it did.
        for name in ("halo2d", "collectives"):
            trace = self.tmp / f"{name}-big"
            real = harness.record(trace, 2, harness.example(name), options=["--payload-order", "big"])
            out = replay(trace, 0, harness.example(name))
            self.assertEqual(out.stdout, real.stdout)
            out = replay(trace, 1, harness.example(name))
            self.assertNotIn("differs from the recorded run", out.stderr)

    def test_trace_cut_short(self):
        # A trace that ends early (a crash during capture): the replay runs up to the cut, then
        # stops with a line saying where the trace ends.
        programs = os.environ.get("ENCORE_TEST_PROGRAMS", "build/tests/programs")
        trace = self.tmp / "cut"
        harness.record(trace, 2, f"{programs}/test_endless", "0.5", options=["--flush-ms", "20"])
        events = trace / "rank-00000.events"
        data = events.read_bytes()
        events.write_bytes(data[: len(data) * 3 // 4])
        out = replay(trace, 0, f"{programs}/test_endless", "0.5", check=False)
        self.assertEqual(out.returncode, 86)
        self.assertIn("alive rank=0", out.stdout)
        self.assertRegex(out.stderr.strip().splitlines()[-1],
                         r"^encore replay: the trace of rank 0 ends after event \d+ .*; the "
                         r"program went on with MPI_\w+$")

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
        # A stream whose file header is cut short cannot be read at all: 3, as for check and
        # show, before the program starts.
        events = trace / "rank-00000.events"
        events.write_bytes(events.read_bytes()[:10])
        out = replay(trace, 0, harness.example("ring"), check=False)
        self.assertEqual(out.returncode, 3, out.stderr)
        self.assertIn("rank-00000.events: truncated file header (10 of 32 bytes)", out.stderr)
        self.assertEqual(out.stdout, "")

    def test_rank_recorded_without_its_received_data(self):
        """--payload-ranks 0: rank 1 can be shown, not replayed (refused before the program
        starts, by encore replay and by libreplay itself). A list the capture cannot read is
        ignored with a warning: everything is recorded."""
        trace = self.tmp / "payload0"
        harness.record(trace, 2, harness.example("ring"), options=["--payload-ranks", "0"])
        out = replay(trace, 1, harness.example("ring"), check=False)
        self.assertEqual(out.returncode, 2, out.stderr)
        self.assertEqual(out.stderr.strip(),
                         "encore: --rank 1: the trace holds no received data of rank 1 (recorded "
                         "with --payload-ranks 0); it can be shown and summarised, not replayed")
        self.assertEqual(out.stdout, "")
        self.assertEqual(replay(trace, 0, harness.example("ring")).returncode, 0)
        trace = self.tmp / "payload-bad"
        rec = harness.record(trace, 2, harness.example("ring"), env={"ENCORE_PAYLOAD_RANKS": "2-1"})
        self.assertIn("ignoring ENCORE_PAYLOAD_RANKS=2-1 (range 2-1 ends before it starts)",
                      rec.stderr)
        manifest = json.loads((trace / "manifest.json").read_text())
        self.assertEqual(manifest["options"]["payload_ranks"], "all")
        self.assertTrue(all(r["payload_bytes"] > 0 for r in manifest["ranks"]))

    def test_program_that_stops_short(self):
        """A program that exits before its trace ends, or never calls MPI_Init, did not do what
        the recorded run did: one line says so, and the replay exits with 86 where the program
        said 0."""
        programs = os.environ.get("ENCORE_TEST_PROGRAMS", "build/tests/programs")
        program = f"{programs}/test_early_exit"
        trace = self.tmp / "early"
        harness.record(trace, 2, program)
        self.assertEqual(replay(trace, 1, program).returncode, 0)
        out = replay(trace, 1, program, "early", check=False)
        self.assertEqual(out.returncode, 86, out.stderr)
        self.assertEqual(out.stderr.strip().splitlines()[-1],
                         "encore replay: the program exited at event 2 of rank 1, before its trace "
                         "ended (the recorded run went on with MPI_Barrier)")
        out = replay(trace, 0, "true", check=False)
        self.assertEqual(out.returncode, 86, out.stderr)
        self.assertIn("the program exited without calling MPI_Init", out.stderr)
        out = replay(trace, 0, "false", check=False)
        self.assertEqual(out.returncode, 1, out.stderr)

    def test_concurrent_threads_say_so(self):
        """MPI_THREAD_MULTIPLE threads calling MPI at once: their order cannot be made again. The
        replay lets one call in at a time (no crash, whatever the threads do), and the first
        call out of the recorded order stops it with the divergence and why."""
        programs = os.environ.get("ENCORE_TEST_PROGRAMS", "build/tests/programs")
        program = f"{programs}/test_threads"
        trace = self.tmp / "threads"
        harness.record(trace, 2, program, 4, 200)
        for _ in range(3):
            out = replay(trace, 0, program, 4, 200, check=False)
            self.assertEqual(out.returncode, 86, out.stderr)
            self.assertRegex(out.stderr.strip().splitlines()[-1],
                             r"^encore replay: divergence at event \d+ of rank 0: .*\(the "
                             r"recorded run was MPI_THREAD_MULTIPLE: replaying threads that call "
                             r"MPI concurrently is not supported yet\)$")

    def test_unsupported_call_says_so(self):
        programs = os.environ.get("ENCORE_TEST_PROGRAMS", "build/tests/programs")
        trace = self.tmp / "rma"
        harness.record(trace, 2, f"{programs}/test_rma_window")
        out = replay(trace, 0, f"{programs}/test_rma_window", check=False)
        self.assertEqual(out.returncode, 86)
        self.assertRegex(out.stderr.strip().splitlines()[-1],
                         r"^encore replay: MPI_Win_create is not supported \(rank 0, event \d+\)$")

    def replay_without_libmpich(self, example, ranks):
        """Records `example` at 2 ranks, then, in a mount namespace where MPICH's libmpich is an
        empty file (so the program cannot even start on its own), replays the given ranks in
        turn with `encore replay`, which runs them with libreplay under MPICH's soname. Checks
        that they ran and printed what the real run printed."""
        trace = self.tmp / example
        program = harness.example(example)
        real = harness.record(trace, 2, program)
        libs = [p for p in glob.glob("/usr/lib/*/libmpich.so.12*") if not os.path.islink(p)]
        self.assertTrue(libs, "MPICH's library not found")
        replays = "".join(f"{harness.TOOL} replay --rank {r} --wtime recorded {trace} -- {program}; "
                          for r in ranks)
        script = (f"mount --bind /dev/null {libs[0]} && "
                  f"{{ {program} >/dev/null 2>&1; echo plain=$?; {replays}}}")
        p = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, text=True,
                           timeout=120)
        if "plain=" not in p.stdout:
            self.skipTest(f"no private mount namespace here: {p.stderr.strip()}")
        self.assertIn("plain=127", p.stdout, "MPICH was still loadable")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn("differs from the recorded run", p.stderr)
        self.assertEqual(p.stdout.replace("plain=127\n", ""), real.stdout)

    def test_without_mpich_installed(self):
        self.replay_without_libmpich("ring", [0])

    def test_fortran_without_mpich_library(self):
        # libmpichfort stays (the Fortran bindings): libreplay answers what it asks of libmpich.
        self.assertTrue(glob.glob("/usr/lib/*/libmpichfort.so.12*"), "libmpichfort not found")
        # Rank 1 prints nothing (rank 0 prints every rank's digest), then rank 0.
        self.replay_without_libmpich("fortran_ring", [1, 0])

    def test_relinked_binary(self):
        # The program linked against libreplay instead of MPICH, run with the trace and rank
        # from the environment.
        trace = self.tmp / "ring"
        real = harness.record(trace, 2, harness.example("ring"))
        exe = self.tmp / "ring.replay"
        mpi_include = subprocess.run(["mpicc", "-show"], capture_output=True, text=True).stdout
        includes = re.findall(r"-I\S+", mpi_include)
        libdir = os.path.join(BUILD, "libreplay")
        harness.run(["cc", "-O2", f"{SOURCE}/examples/ring.c", f"{SOURCE}/examples/common/digest.c",
                     f"-I{SOURCE}/examples/common", *includes, "-o", str(exe), f"-L{libdir}",
                     "-lencore-replay", f"-Wl,-rpath,{os.path.abspath(libdir)}"])
        needed = harness.run(["readelf", "-d", str(exe)]).stdout
        self.assertNotIn("libmpich", needed)
        out = harness.run([str(exe)], env={"ENCORE_REPLAY_TRACE": str(trace), "ENCORE_REPLAY_RANK": "0",
                                           "ENCORE_REPLAY_WTIME": "recorded"})
        self.assertEqual(out.stdout, real.stdout)
        # The same through a config file.
        cfg = self.tmp / "replay.conf"
        cfg.write_text(f"ENCORE_REPLAY_TRACE={trace}\nENCORE_REPLAY_RANK=1\n")
        out = harness.run([str(exe)], env={"ENCORE_REPLAY_CONFIG": str(cfg)})
        self.assertEqual(out.returncode, 0)

    def test_serialized_threads(self):
        # MPI_THREAD_SERIALIZED: two threads per rank take turns calling MPI, so each rank's
        # trace has two streams whose chunks reach the file in flush order. The replay merges
        # them back into call order; every rank's calls match and rank 0 prints what it did.
        program = os.path.join(os.environ["ENCORE_TEST_PROGRAMS"], "test_serialized")
        trace = self.tmp / "serialized"
        real = harness.record(trace, 2, program)
        check = harness.run([harness.TOOL, "check", str(trace)])
        self.assertEqual(check.stdout.count("complete"), 2, check.stdout)
        stats = harness.run([harness.TOOL, "stats", str(trace)]).stdout
        self.assertIn("on 2 threads", stats)
        for rank in range(2):
            out = replay(trace, rank, program)
            self.assertNotIn("sends differed", out.stderr)
            if rank == 0:
                self.assertEqual(out.stdout, real.stdout)
                self.assertEqual(out.stdout.count("digest rank="), 2)


if __name__ == "__main__":
    harness.main()
