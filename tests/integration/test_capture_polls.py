"""Runs of failed polls (format 1.2): capture records a run of identical failed MPI_Iprobe,
MPI_Improbe, MPI_Test, MPI_Testany, MPI_Testall or MPI_Testsome calls as its first event plus
one repeat head per poll, and every reader still sees each poll as an event of its own, with
its own index and times: `encore show` prints each, the replay of each rank makes the same
polls (identical output), request references still name the Irecv that created them, and a
run in progress reaches the file at the periodic flush and through the crash handler."""
import os
import re

import harness

PROGRAMS = os.environ.get("ENCORE_TEST_PROGRAMS", "build/tests/programs")
POLLING = f"{PROGRAMS}/test_polling"
FUNCTIONS = ("MPI_Iprobe", "MPI_Improbe", "MPI_Test", "MPI_Testany", "MPI_Testall", "MPI_Testsome")


def tool(*args, **kw):
    return harness.run([harness.TOOL, *map(str, args)], timeout=300, **kw)


def counts(program_stdout):
    m = re.search(r"^polls: (.*)$", program_stdout, re.M)
    return {k: int(v) for k, v in re.findall(r"(MPI_\w+)=(\d+)", m.group(1))}


def shown(trace, rank):
    """{function: [event lines]} of one rank in `encore show`, and the events' indices."""
    by_fn, indices = {}, []
    for line in tool("show", trace, "--rank", rank).stdout.splitlines():
        if m := re.match(r"r\d+ t0 #(\d+) (MPI_\w+) ", line):
            indices.append(int(m.group(1)))
            by_fn.setdefault(m.group(2), []).append(line)
    return by_fn, indices


class Polls(harness.TempDirTest):
    def test_every_poll_is_an_event(self):
        trace = self.tmp / "polls"
        # Flushing every 5 ms (--flush-ms 10) cuts chunks inside runs: a chunk must then start
        # with the run's first poll again, and still decode on its own.
        rec = harness.record(trace, 2, POLLING, 20, options=["--flush-ms", "10"])
        want = counts(rec.stdout)
        self.assertEqual(sorted(want), sorted(FUNCTIONS))
        by_fn, indices = shown(trace, 0)
        for fn in FUNCTIONS:
            self.assertEqual(len(by_fn.get(fn, [])), want[fn], fn)
            self.assertGreater(want[fn], 64, fn)  # runs of repeats, broken by the other args
        # Each its own index, in order; check agrees on the count and reads every chunk.
        self.assertEqual(indices, list(range(len(indices))))
        check = tool("check", trace).stdout
        self.assertRegex(check, r"rank 0: complete \(%d events, (\d+) chunks" % len(indices))
        self.assertGreater(int(re.search(r"rank 0: complete \(\d+ events, (\d+) chunks", check).group(1)), 3)
        # The rare argument set (tag 99, every 64th call) is not folded into the runs.
        rare = [line for line in by_fn["MPI_Iprobe"] if "tag=99" in line]
        self.assertEqual(len(rare), want["MPI_Iprobe"] // 64, by_fn["MPI_Iprobe"][:3])
        self.assertIn("status={", by_fn["MPI_Iprobe"][0])
        # A failed MPI_Testall leaves every status undefined: none recorded (the capture
        # recorded its scratch array's garbage, e.g. src=32628 tag=-238769959).
        failed = [line for line in by_fn["MPI_Testall"] if " flag=0 " in line]
        self.assertGreater(len(failed), 64)
        self.assertTrue(all(line.endswith("flag=0 array_of_statuses=[]") for line in failed),
                        [line for line in failed if not line.endswith("[]")][:2])
        # A failed MPI_Test names the Irecv that created its request, like the first one.
        tests = by_fn["MPI_Test"]
        self.assertEqual(len({re.search(r"request=\S+", t).group(0) for t in tests[:60]}), 1, tests[:2])
        # Far fewer bytes than the polls would take as events of their own (10 to 14 each).
        size = (trace / "rank-00000.events").stat().st_size
        self.assertLess(size, 4 * sum(want.values()))

    def test_replay_makes_the_same_polls(self):
        trace = self.tmp / "polls"
        rec = harness.record(trace, 2, POLLING, 3)
        for rank in (0, 1):
            out = tool("replay", "--rank", rank, trace, "--", POLLING, 3)
            self.assertNotIn("differs from the recorded run", out.stderr)
            if rank == 0:
                self.assertEqual(out.stdout, rec.stdout)

    def test_crash_mid_run_keeps_every_poll(self):
        # The flush writes the start of the run; the signal handler the rest, which starts
        # inside the run.
        trace = self.tmp / "crashed"
        rec = harness.record(trace, 2, POLLING, 300, "crash", options=["--flush-ms", "100"],
                             check=False)
        self.assertNotEqual(rec.returncode, 0)
        polls = int(re.search(r"polls=(\d+)", rec.stderr).group(1))
        self.assertGreater(polls, 1000)
        show = tool("show", trace, "--rank", 0, check=False)
        self.assertEqual(show.stdout.count(" MPI_Iprobe "), polls, show.stderr)


if __name__ == "__main__":
    harness.main()
