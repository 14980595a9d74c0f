"""Replay profiles (`encore replay -o DIR`): an Encore trace of kind "replay" holding the
replayed rank's calls in the recorded order with this machine's compute timeline, which
`encore check/show/stats` read; written up to the divergence when the program diverges."""
import json
import os
import pathlib
import re
import signal
import subprocess
import time

import harness

PROGRAMS = os.environ.get("ENCORE_TEST_PROGRAMS", "build/tests/programs")


def show_calls(trace, *args, check=True):
    """(function, arguments) per line of `encore show`, times left out."""
    out = harness.run([harness.TOOL, "show", str(trace), *args], check=check).stdout
    calls = []
    for line in out.splitlines():
        m = re.match(r"^r\d+ t(\d+) #(\d+) (\S+)\s+\S+ ms \+\S+\s*(.*)$", line)
        if m:
            # Received-data annotations exist only in the capture (the profile holds no data);
            # a stall is the capture's wait for buffer space, or the replay's time not running.
            # A call without arguments (MPI_Finalize) has the stall as its whole text.
            text = re.sub(r"(^|\s)stall=\S+$", "", m.group(4))
            # The received data (one token) and the first read go; contributions stay.
            text = re.sub(r" recv (\[\d+\])?\d\S*", "", text)
            calls.append((m.group(1), m.group(2), m.group(3), re.sub(r" first_read=\S+", "", text)))
    return calls


def stats(trace):
    return json.loads(harness.run([harness.TOOL, "stats", "--json", str(trace)]).stdout)


class ReplayProfile(harness.TempDirTest):
    def replay(self, trace, rank, profile, *args, check=True):
        return harness.run([harness.TOOL, "replay", "--rank", str(rank), "-o", str(profile),
                            "--wtime", "recorded", str(trace), "--", harness.example("halo2d"),
                            *map(str, args)], check=check, timeout=120)

    def test_profile_of_each_rank(self):
        trace = self.tmp / "halo"
        harness.record(trace, 2, harness.example("halo2d"))
        recorded = stats(trace)
        for rank in range(2):
            with self.subTest(rank=rank):
                prof = self.tmp / f"prof{rank}"
                self.replay(trace, rank, prof)
                manifest = json.loads((prof / "manifest.json").read_text())
                self.assertEqual(manifest["kind"], "replay")
                self.assertEqual(manifest["nprocs"], 2)
                self.assertEqual(manifest["replay_of"]["rank"], rank)
                self.assertEqual(manifest["replay_of"]["trace"], str(trace.resolve()))
                self.assertEqual([r["rank"] for r in manifest["ranks"]], [rank])
                self.assertEqual(manifest["ranks"][0]["status"], "complete")
                self.assertIn("cpu_model", manifest["machine"])
                # Time the thread was not running, looked at where a segment or call was long.
                stall = manifest["replay"]["stall"]
                self.assertIn(stall["source"], ("run_delay", "wall - thread CPU"))
                if os.access("/proc/thread-self/schedstat", os.R_OK):
                    # Read and parsed here: a field the replay failed to parse would have
                    # switched it to the clocks.
                    self.assertEqual(stall["source"], "run_delay")
                self.assertGreater(stall["reads"], 0)
                self.assertGreater(stall["cpu_ns"], 0)
                self.assertLessEqual(stall["segments_ns"], manifest["replay"]["compute_ns"])
                check = harness.run([harness.TOOL, "check", str(prof)]).stdout
                self.assertRegex(check, rf"^rank {rank}: complete \(")
                # The same calls with the same arguments, in the same order.
                self.assertEqual(show_calls(prof), show_calls(trace, "--rank", str(rank)))
                s = stats(prof)
                self.assertEqual(len(s["ranks"]), 1)
                r = s["ranks"][0]
                self.assertEqual(r["events"], recorded["ranks"][rank]["events"])
                self.assertEqual(r["mpi_ns"], 0)  # replayed calls communicate with nobody
                self.assertGreater(r["compute_ns"], 0)
                self.assertGreater(r["overhead_ns"], 0)  # the replay's own cost, kept apart
                self.assertEqual(r["bytes_sent"], recorded["ranks"][rank]["bytes_sent"])
                # --rank of a rank the profile does not hold: a usage error naming what it holds
                other = harness.run([harness.TOOL, "show", str(prof), "--rank", str(1 - rank)],
                                    check=False)
                self.assertEqual(other.returncode, 2)
                self.assertIn(f"holds rank(s) {rank} only", other.stderr)

    def test_profile_stops_at_divergence(self):
        trace = self.tmp / "halo"
        harness.record(trace, 2, harness.example("halo2d"))
        prof = self.tmp / "prof"
        # Fewer iterations than recorded: the program calls MPI_Gather where the trace goes on.
        out = self.replay(trace, 0, prof, 128, 20, check=False)
        self.assertEqual(out.returncode, 86, out.stderr)
        m = re.search(r"divergence at event (\d+)", out.stderr)
        self.assertIsNotNone(m, out.stderr)
        manifest = json.loads((prof / "manifest.json").read_text())
        self.assertEqual(manifest["ranks"][0]["status"], "aborted")
        self.assertEqual(manifest["ranks"][0]["events"], int(m.group(1)))
        calls = show_calls(prof)
        self.assertEqual(len(calls), int(m.group(1)))
        self.assertEqual(calls, show_calls(trace, "--rank", "0")[: len(calls)])

    def test_every_exporter_reads_a_profile(self):
        # A profile holds one rank of two: each format gets that rank's calls, and says so.
        trace = self.tmp / "halo"
        harness.record(trace, 2, harness.example("halo2d"))
        prof = self.tmp / "prof1"
        self.replay(trace, 1, prof)
        events = stats(prof)["ranks"][0]["events"]
        for fmt in ("simgrid", "chrome", "otf2", "dumpi"):
            with self.subTest(format=fmt):
                out = self.tmp / f"prof1.{fmt}"
                p = harness.run([harness.TOOL, "export", "--to", fmt, str(prof), str(out)])
                self.assertRegex(p.stdout, rf"^{fmt}: {events} events -> \d+ records")
        index = (self.tmp / "prof1.simgrid" / "index.txt").read_text().splitlines()
        self.assertEqual([pathlib.Path(line).name for line in index], ["rank-00001.txt"])
        doc = json.loads((self.tmp / "prof1.chrome").read_text())
        calls = [e for e in doc["traceEvents"] if e.get("ph") == "X" and e.get("name") != "compute"]
        self.assertEqual(len(calls), events)
        self.assertEqual({e["pid"] for e in calls}, {1})
        # simulate needs every rank: a profile is refused with a line saying what to give
        p = harness.run([harness.TOOL, "simulate", str(prof), "--topology", "flat"], check=False)
        self.assertEqual(p.returncode, 2)
        self.assertIn("simulate needs every rank", p.stderr)

    def test_sigkill_keeps_the_profile_up_to_the_last_second(self):
        # 5 ms of sleep before each of 600 calls: the replay lasts as long as the capture. Killed
        # 1.8 s in, it has made fewer calls than one batch (512): only the timed flush (about
        # every second) can have put them in the file, on the profile's writer thread or not.
        prog = f"{PROGRAMS}/test_slow_calls"
        trace = self.tmp / "slow"
        harness.record(trace, 2, prog, 600, 5)
        for writer in ("1", "0"):
            with self.subTest(profile_thread=writer):
                prof = self.tmp / f"prof{writer}"
                env = {**os.environ, "ENCORE_REPLAY_PROFILE_THREAD": writer}
                proc = subprocess.Popen([harness.TOOL, "replay", "--rank", "0", "-o", str(prof),
                                         str(trace), "--", prog, "600", "5"], env=env,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                child, deadline = None, time.time() + 60
                while child is None and time.time() < deadline and proc.poll() is None:
                    time.sleep(0.05)
                    pids = subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True,
                                          text=True).stdout.split()
                    child = int(pids[0]) if pids else None
                self.assertIsNotNone(child, "the replayed program did not start")
                time.sleep(1.8)
                threads = {t.joinpath("comm").read_text().strip()
                           for t in pathlib.Path(f"/proc/{child}/task").iterdir()}
                os.kill(child, signal.SIGKILL)
                _, err = proc.communicate(timeout=60)
                self.assertEqual(proc.returncode, 128 + signal.SIGKILL, err)
                self.assertEqual("encore-profile" in threads, writer == "1", threads)
                check = harness.run([harness.TOOL, "check", str(prof)], check=False)
                self.assertEqual(check.returncode, 1, check.stdout + check.stderr)
                self.assertRegex(check.stdout, r"rank 0: (truncated|incomplete)")
                calls = show_calls(prof, check=False)  # exits 1: the stream is cut
                self.assertGreaterEqual(len(calls), 20, check.stdout)
                self.assertLess(len(calls), 400)  # at most 360 calls in 1.8 s
                self.assertEqual(calls, show_calls(trace, "--rank", "0")[: len(calls)])

    def test_writer_thread_writes_the_same_profile(self):
        # Batches written on the profile's thread or by the calls: the same calls, every one.
        trace = self.tmp / "halo"
        harness.record(trace, 2, harness.example("halo2d"), 128, 300)
        recorded = show_calls(trace, "--rank", "0")
        for writer in ("1", "0"):
            with self.subTest(profile_thread=writer):
                prof = self.tmp / f"prof{writer}"
                harness.run([harness.TOOL, "replay", "--rank", "0", "-o", str(prof), "--wtime",
                             "recorded", str(trace), "--", harness.example("halo2d"), "128", "300"],
                            env={"ENCORE_REPLAY_PROFILE_THREAD": writer}, timeout=120)
                check = harness.run([harness.TOOL, "check", str(prof)]).stdout
                self.assertRegex(check, r"^rank 0: complete \(")
                self.assertEqual(show_calls(prof), recorded)
                s = stats(prof)["ranks"][0]
                self.assertEqual(s["events"], len(recorded))
                self.assertGreater(s["overhead_ns"], 0)

    def test_output_directory_must_be_new(self):
        trace = self.tmp / "halo"
        harness.record(trace, 2, harness.example("halo2d"))
        out = self.replay(trace, 0, trace, check=False)
        self.assertEqual(out.returncode, 2)
        self.assertIn("a trace is already there", out.stderr)


if __name__ == "__main__":
    harness.main()
