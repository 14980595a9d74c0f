"""Crash tolerance and threads: a rank killed with SIGKILL leaves a trace readable up to its last
flushed chunk; MPI_THREAD_MULTIPLE programs keep each thread's calls in its own order; a
program that calls MPI_Abort leaves complete, checkable data up to the abort."""
import os
import re
import signal
import subprocess
import time

import harness

PROGRAMS = os.environ.get("ENCORE_TEST_PROGRAMS", "build/tests/programs")


class Resilience(harness.TempDirTest):
    def test_sigkill_mid_run(self):
        trace = self.tmp / "killed"
        env = dict(os.environ)
        proc = subprocess.Popen(
            # (Chunks written raw, as where ranks fill the cores: `encore pack` below packs them.)
            [harness.TOOL, "record", "-o", str(trace), "--flush-ms", "200", "--compress", "after", "--",
             harness.MPIEXEC, "-n", "2", f"{PROGRAMS}/test_endless", "60"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        # Wait until both ranks are exchanging, then kill rank 1's process outright.
        deadline = time.time() + 60
        victim = None
        while time.time() < deadline and victim is None:
            time.sleep(0.5)
            out = subprocess.run(["pgrep", "-f", f"{PROGRAMS}/test_endless 60"],
                                 capture_output=True, text=True).stdout.split()
            ranks = [int(p) for p in out if self._is_rank(int(p))]
            if len(ranks) == 2:
                time.sleep(1.5)
                victim = max(ranks)
        self.assertIsNotNone(victim, "the ranks did not start")
        os.kill(victim, signal.SIGKILL)
        try:
            proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            self.fail("mpiexec did not end after a rank was killed")
        self.assertNotEqual(proc.returncode, 0)

        check = harness.run([harness.TOOL, "check", str(trace)], check=False)
        self.assertEqual(check.returncode, 1, check.stdout + check.stderr)
        self.assertRegex(check.stdout + check.stderr, r"rank \d: (truncated|incomplete)")
        # Everything before the cut reads back: at least a second's worth of exchanges.
        shows = []
        for rank in (0, 1):
            show = harness.run([harness.TOOL, "show", str(trace), "--rank", str(rank)], check=False)
            self.assertNotIn("Segmentation", show.stderr)
            calls = show.stdout.count("MPI_Sendrecv_replace")
            self.assertGreater(calls, 100, f"rank {rank}: only {calls} calls before the cut")
            shows.append(show.stdout)

        # The killed ranks never packed their files: `encore pack` does, and readers find the
        # same events and the same cut (at another offset: the chunks before it are smaller).
        def sizes():
            return sum(p.stat().st_size for p in trace.glob("rank-*"))
        def without_offsets(text):
            return re.sub(r"offset \d+", "offset _", text)
        before = sizes()
        pack = harness.run([harness.TOOL, "pack", str(trace)], check=False)
        self.assertEqual(pack.returncode, 0, pack.stdout + pack.stderr)
        self.assertEqual(len(re.findall(r"^rank-0000\d\.(events|payload): \d+ chunks, ", pack.stdout,
                                        re.M)), 4, pack.stdout)
        self.assertIn("no end-of-stream trailer", pack.stdout)
        self.assertLess(sizes(), before / 2)
        self.assertEqual(list(trace.glob("*.packing")), [])
        again = harness.run([harness.TOOL, "check", str(trace)], check=False)
        self.assertEqual(again.returncode, 1)
        self.assertEqual(without_offsets(again.stdout), without_offsets(check.stdout))
        for rank in (0, 1):
            show = harness.run([harness.TOOL, "show", str(trace), "--rank", str(rank)], check=False)
            self.assertEqual(show.stdout, shows[rank], f"rank {rank}")
        # Packed files are not packed again.
        twice = harness.run([harness.TOOL, "pack", str(trace)])
        self.assertEqual(twice.stdout.count("already compressed"), 4, twice.stdout)

    def test_fatal_signal_writes_every_committed_event(self):
        # No periodic flush before the crash: what rank 1 recorded reaches the file only
        # through the signal handler, which encodes the raw times piece by piece.
        trace = self.tmp / "crashed"
        rec = harness.run([harness.TOOL, "record", "-o", str(trace), "--flush-ms", "600000",
                           "--", harness.MPIEXEC, "-n", "2", f"{PROGRAMS}/test_crash_mid", "200"],
                          check=False)
        self.assertNotEqual(rec.returncode, 0)
        show = harness.run([harness.TOOL, "show", str(trace), "--rank", "1"], check=False)
        self.assertNotIn("Segmentation", show.stderr)
        calls = [l for l in show.stdout.splitlines() if " MPI_Sendrecv_replace " in l]
        self.assertEqual(len(calls), 200, show.stdout[-2000:] + show.stderr)
        # Corrected start times go forward and every call took some time.
        starts = [float(re.search(r" ([\d.]+) ms ", l).group(1)) for l in calls]
        self.assertEqual(starts, sorted(starts))
        self.assertGreater(starts[-1], starts[0])

    def test_abort_flushes_and_says_so(self):
        trace = self.tmp / "aborted"
        rec = harness.record(trace, 2, f"{PROGRAMS}/test_abort_mid", 50, check=False)
        self.assertNotEqual(rec.returncode, 0)
        check = harness.run([harness.TOOL, "check", str(trace)], check=False)
        self.assertEqual(check.returncode, 1, check.stdout + check.stderr)
        self.assertRegex(check.stdout, r"rank 1: .*aborted")
        show = harness.run([harness.TOOL, "show", str(trace), "--rank", "1"], check=False).stdout
        calls = re.findall(r"^r1 t0 #\d+ (MPI_\w+)", show, re.M)
        self.assertEqual(calls.count("MPI_Sendrecv_replace"), 50)
        self.assertEqual(calls[-1], "MPI_Abort")

    def test_fatal_mpi_error_flushes_first(self):
        # MPI_ERRORS_ARE_FATAL: MPICH aborts through the process manager and waits to be
        # killed, so before the capture's handler the faulty rank's trace held nothing of a
        # short run. Now its calls up to the failing one are in the trace.
        trace = self.tmp / "fatal"
        rec = harness.record(trace, 2, f"{PROGRAMS}/test_fatal_error", 100, check=False)
        self.assertNotEqual(rec.returncode, 0, rec.stderr)
        self.assertRegex(rec.stderr, r"Fatal error on rank 1 \(MPI_ERRORS_ARE_FATAL; the Encore "
                                     r"trace was flushed\): Invalid rank")
        check = harness.run([harness.TOOL, "check", str(trace)], check=False)
        self.assertEqual(check.returncode, 1, check.stdout + check.stderr)
        m = re.search(r"rank 1: (?:incomplete|truncated) at event (\d+)", check.stdout)
        self.assertTrue(m, check.stdout)
        self.assertGreaterEqual(int(m.group(1)), 100, check.stdout)
        shown = harness.run([harness.TOOL, "show", "--rank", "1", str(trace)], check=False).stdout
        self.assertEqual(shown.count(" MPI_Allreduce "), 100, shown[-500:])

    def test_disk_full(self):
        # A 300 KiB tmpfs fills up while the 1 MiB ping-pong is recorded: each rank says once
        # that its trace stops there, the program itself finishes normally, and what was
        # written reads back up to the cut.
        mnt = self.tmp / "small"
        mnt.mkdir()
        mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=300k", "tmpfs", str(mnt)],
                                 capture_output=True, text=True)
        if mounted.returncode != 0:
            self.skipTest(f"cannot mount a small tmpfs here: {mounted.stderr.strip()}")
        try:
            trace = mnt / "t"
            env = {"ENCORE_TRACE_DIR": str(trace), "ENCORE_FLUSH_MS": "50",
                   "LD_PRELOAD": harness.DUMP_LIB}
            loops = os.path.join(os.environ.get("ENCORE_BUILD_DIR", "build"), "bench/bench_capture_loops")
            p = harness.run([harness.MPIEXEC, "-n", "2", loops, "20000", "20"], env=env, check=False)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIn("loop=pingpong1M", p.stdout)
            cut = [l for l in p.stderr.splitlines() if "capture stopped" in l]
            self.assertTrue(cut, p.stderr)
            for line in cut:
                self.assertRegex(line, r"^encore: rank \d: capture stopped, its trace ends here: "
                                       r".*No space left on device")
            check = harness.run([harness.TOOL, "check", str(trace)], check=False)
            self.assertIn(check.returncode, (1, 3), check.stdout + check.stderr)
            self.assertNotIn("Segmentation", check.stderr)
            # Under `encore record` the program's 0 becomes 1, with a line naming the trace.
            subprocess.run(["rm", "-rf", str(trace)], check=True)
            rec = harness.run([harness.TOOL, "record", "-o", str(mnt / "t2"), "--flush-ms", "50",
                               "--", harness.MPIEXEC, "-n", "2", loops, "20000", "20"],
                              check=False)
            self.assertEqual(rec.returncode, 1, rec.stderr)
            self.assertIn("No space left on device", rec.stderr)
            self.assertRegex(rec.stderr.strip().splitlines()[-1],
                             r"^encore: .*t2: (the trace of rank\(s\) [\d,]+ is not complete|the "
                             r"capture could not finish its trace)")
        finally:
            subprocess.run(["umount", str(mnt)], capture_output=True)

    @staticmethod
    def _is_rank(pid):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                return f.read().split(b"\0")[0].endswith(b"test_endless")
        except OSError:
            return False

    def test_thread_multiple(self):
        trace = self.tmp / "threads"
        rec = harness.record(trace, 2, f"{PROGRAMS}/test_threads", 3, 50)
        self.assertEqual(len(re.findall(r"thread-messages rank=\d n=150", rec.stdout)), 2)
        harness.run([harness.TOOL, "check", str(trace)])
        show = harness.run([harness.TOOL, "show", str(trace), "--rank", "1"]).stdout
        per_thread = {}
        for m in re.finditer(r"^r1 t(\d+) #(\d+) MPI_Sendrecv\b", show, re.M):
            per_thread.setdefault(int(m.group(1)), []).append(int(m.group(2)))
        # Three worker threads, 50 calls each, each thread's events numbered in its own order.
        self.assertEqual(sorted(per_thread), [1, 2, 3], show[:2000])
        for t, idx in per_thread.items():
            self.assertEqual(idx, list(range(len(idx))), f"thread {t} out of order")
            self.assertEqual(len(idx), 50)


if __name__ == "__main__":
    harness.main()
