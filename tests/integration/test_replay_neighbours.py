"""`encore replay --neighbours`: while one rank replays (measured, bound to a CPU), other ranks
of the recording replay beside it on CPUs of their own, again and again, as load, paced as
recorded unless --neighbours-pace none; they are gone when the measured rank's program ends. A
neighbour whose replay fails stops, and the measured replay says so and goes on. Counts the
trace or the machine cannot give are refused. ENCORE_REPLAY_PACE=recorded, the loads' pace,
makes any replay's calls last as long as recorded."""
import json
import os
import pathlib
import shutil
import subprocess
import time
import unittest

import harness

PROGRAMS = os.environ.get("ENCORE_TEST_PROGRAMS", "build/tests/programs")


def replay_cmd(trace, rank, *options, args=("256", "200")):
    return [harness.TOOL, "replay", "--rank", str(rank), *options, str(trace), "--",
            harness.example("halo2d"), *args]


def replays_of(trace, rank, paces=None):
    """{pid: CPUs allowed} of the processes replaying `rank` of `trace` (their environment);
    with `paces` (a dict), paces[pid] is their ENCORE_REPLAY_PACE (None if unset)."""
    want = {f"ENCORE_REPLAY_RANK={rank}".encode(),
            f"ENCORE_REPLAY_TRACE={pathlib.Path(trace).resolve()}".encode()}
    found = {}
    for d in pathlib.Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            env = set((d / "environ").read_bytes().split(b"\0"))
            if not want <= env:
                continue
            status = (d / "status").read_text()
        except OSError:
            continue
        if paces is not None:
            paces[int(d.name)] = next((e.split(b"=", 1)[1].decode() for e in env
                                       if e.startswith(b"ENCORE_REPLAY_PACE=")), None)
        found[int(d.name)] = next(l.split()[1] for l in status.splitlines()
                                  if l.startswith("Cpus_allowed_list:"))
    return found


@unittest.skipIf(len(os.sched_getaffinity(0)) < 2, "--neighbours needs 2 CPUs (a spare one)")
class ReplayNeighbours(harness.TempDirTest):
    def setUp(self):
        super().setUp()
        self.trace = self.tmp / "halo"
        harness.record(self.trace, 2, harness.example("halo2d"), 256, 200)

    def test_the_other_rank_replays_beside_as_load_and_is_gone_after(self):
        profile = self.tmp / "prof"
        # The program, then a second's pause, so the load can be looked at while it runs
        # (the neighbours run the same command: their replays and pauses alternate).
        command = ["sh", "-c", f"{harness.example('halo2d')} 256 200 && sleep 1"]
        proc = subprocess.Popen([harness.TOOL, "replay", "--rank", "0", "--neighbours", "auto",
                                 "-o", str(profile), str(self.trace), "--", *command],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        seen, measured, paces = {}, {}, ({}, {})
        deadline = time.monotonic() + 60
        while proc.poll() is None and time.monotonic() < deadline and not (seen and measured):
            seen = seen or replays_of(self.trace, 1, paces[1])
            measured = measured or replays_of(self.trace, 0, paces[0])
            time.sleep(0.01)
        out, err = proc.communicate(timeout=120)
        self.assertEqual(proc.returncode, 0, err)
        self.assertTrue(seen, "no replay of rank 1 ran beside rank 0's")
        self.assertTrue(measured, "rank 0's replay was not seen")
        # Each on a CPU of its own, the measured rank on the first encore may use.
        self.assertEqual(set(measured.values()), {str(min(os.sched_getaffinity(0)))})
        self.assertEqual(len(set(seen.values())), 1)
        self.assertNotEqual(set(seen.values()), set(measured.values()))
        self.assertRegex(err, r"encore: rank 0 on CPU \d+; replayed beside it as load: "
                              r"rank 1 on CPU \d+")
        # The load is paced as recorded (the default), the measured rank is not.
        self.assertEqual(set(paces[1].values()), {"recorded"})
        self.assertEqual(set(paces[0].values()), {None})
        # Only the measured rank's program prints (rank 0 prints the digests).
        self.assertEqual(out.count("digest rank=0"), 1, out)
        # The load is gone with it, and left no profile of its own.
        time.sleep(0.2)
        self.assertEqual(replays_of(self.trace, 1), {})
        self.assertEqual(sorted(p.name for p in self.tmp.iterdir()), ["halo", "prof"])
        manifest = json.loads((profile / "manifest.json").read_text())
        self.assertEqual(manifest["kind"], "replay")
        self.assertEqual(manifest["replay_of"]["rank"], 0)

    def test_a_failing_neighbour_is_reported_and_the_replay_goes_on(self):
        broken = self.tmp / "broken"
        shutil.copytree(self.trace, broken)
        with open(broken / "rank-00001.events", "r+b") as f:
            f.truncate(20)  # rank 1's replay cannot even read its stream's header
        # The replay of rank 0 outlives the neighbour's first attempt by a second: a loop still
        # starting when the replay ends is stopped without a word (on a loaded machine the
        # 0.2 s halo2d replay could end first).
        command = ["sh", "-c", f"{harness.example('halo2d')} 256 200 && sleep 1"]
        out = harness.run([harness.TOOL, "replay", "--rank", "0", "--neighbours", "1", str(broken),
                           "--", *command], check=False, timeout=120)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertRegex(out.stderr, r"encore: the neighbour replay of rank 1 stopped early "
                                     r"\(exit code [1-9]\d*\)")
        self.assertIn("digest rank=0", out.stdout)

    def test_unpaced_loads_on_request(self):
        command = ["sh", "-c", f"{harness.example('halo2d')} 256 200 && sleep 1"]
        proc = subprocess.Popen([harness.TOOL, "replay", "--rank", "0", "--neighbours", "1",
                                 "--neighbours-pace", "none", str(self.trace), "--", *command],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        paces = {}
        deadline = time.monotonic() + 60
        while proc.poll() is None and time.monotonic() < deadline and not paces:
            replays_of(self.trace, 1, paces)
            time.sleep(0.01)
        _, err = proc.communicate(timeout=120)
        self.assertEqual(proc.returncode, 0, err)
        self.assertEqual(set(paces.values()), {"none"})
        out = harness.run(replay_cmd(self.trace, 0, "--neighbours", "1", "--neighbours-pace",
                                     "slow"), check=False)
        self.assertEqual(out.returncode, 2, out.stderr)
        self.assertIn("--neighbours-pace", out.stderr)

    def test_counts_it_cannot_give_are_refused(self):
        for value, message in (("2", "--neighbours 2: the trace has 1 other rank(s)"),
                               ("x", "--neighbours x: give auto or a number of ranks"),
                               ("-1", "--neighbours -1: give auto or a number of ranks")):
            with self.subTest(value=value):
                out = harness.run(replay_cmd(self.trace, 0, "--neighbours", value), check=False)
                self.assertEqual(out.returncode, 2, out.stderr)
                self.assertEqual(out.stderr.strip(), f"encore: {message}")
        # 0 is no load at all, as without the option.
        out = harness.run(replay_cmd(self.trace, 0, "--neighbours", "0"), check=False)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertNotIn("as load", out.stderr)


class ReplayPace(harness.TempDirTest):
    """ENCORE_REPLAY_PACE=recorded: each replayed call lasts at least as long as recorded."""

    def test_a_paced_replay_waits_as_the_rank_did(self):
        # Rank 0 sleeps 150 ms before each of its 2 Allreduces, rank 1 not at all: rank 1's
        # Allreduces were recorded waiting about 300 ms in all.
        prog = f"{PROGRAMS}/test_slow_calls"
        trace = self.tmp / "slow"
        harness.run([harness.TOOL, "record", "-o", str(trace), "--", harness.MPIEXEC,
                     "-n", "1", prog, "2", "150", ":", "-n", "1", prog, "2", "0"])
        cmd = [harness.TOOL, "replay", "--rank", "1", str(trace), "--", prog, "2", "0"]
        spans = {}
        for pace in ("none", "recorded"):
            t0 = time.monotonic()
            harness.run(cmd, env={**os.environ, "ENCORE_REPLAY_PACE": pace})
            spans[pace] = time.monotonic() - t0
        self.assertGreaterEqual(spans["recorded"], 0.29, spans)
        # Unpaced, nothing waits (a margin of 0.2 s for a busy machine).
        self.assertLess(spans["none"], spans["recorded"] - 0.2, spans)
        out = harness.run(cmd, env={**os.environ, "ENCORE_REPLAY_PACE": "fast"}, check=False)
        self.assertEqual(out.returncode, 86, out.stderr)
        self.assertEqual(out.stderr.strip(),
                         "encore replay: ENCORE_REPLAY_PACE=fast: give recorded or none")


if __name__ == "__main__":
    unittest.main()
