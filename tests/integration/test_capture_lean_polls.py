"""The lean poll path: a failed poll that continues its thread's run of identical polls is
recorded without a Call (a 32-byte record and a repeat head, published with one store). Every
poll must still be an event of its thread, with its own index, in the order the thread made its
calls, when runs are broken by other calls, by a poll that finds something, and when two
threads poll at once; a run still open when the process is killed reaches the file at the
periodic flush."""
import os
import re

import harness

PROGRAMS = os.environ.get("ENCORE_TEST_PROGRAMS", "build/tests/programs")
LEAN = f"{PROGRAMS}/test_lean_polls"
POLLING = f"{PROGRAMS}/test_polling"


def tool(*args, **kw):
    return harness.run([harness.TOOL, *map(str, args)], timeout=300, **kw)


def arg(line, name):
    return re.search(rf"\b{name}=(-?\d+)", line).group(1)


def token(fn, line):
    """An event of `encore show` as the program logs its calls (tests/programs/lean_polls.c)."""
    if fn == "MPI_Iprobe":
        return f"I{arg(line, 'tag')}{arg(line, 'flag')}"
    if fn == "MPI_Test":
        return f"T{arg(line, 'flag')}"
    if fn == "MPI_Send":
        return f"S{arg(line, 'tag')}"
    if fn == "MPI_Recv":
        return f"V{arg(line, 'tag')}"
    return {"MPI_Comm_rank": "R", "MPI_Irecv": "Q", "MPI_Cancel": "C", "MPI_Wait": "W"}[fn]


class LeanPolls(harness.TempDirTest):
    def test_threads_keep_every_poll_in_order(self):
        trace = self.tmp / "lean"
        # Flushing every 10 ms cuts chunks inside runs, which then start with the template.
        rec = harness.record(trace, 2, LEAN, 3000, options=["--flush-ms", "10"])
        logged = {}
        for m in re.finditer(r"^thread (\d+): (.*)$", rec.stdout, re.M):
            logged[int(m.group(1))] = m.group(2).split()
        self.assertEqual(sorted(logged), [0, 1], rec.stdout[:200])
        streams, indices = {}, {}
        for line in tool("show", trace, "--rank", 0).stdout.splitlines():
            m = re.match(r"r0 t(\d+) #(\d+) (MPI_\w+) ", line)
            if m:
                streams.setdefault(int(m.group(1)), []).append((m.group(3), line))
                indices.setdefault(int(m.group(1)), []).append(int(m.group(2)))
        # The main thread is t0; the workers are t1 and t2 in the order they first called MPI.
        self.assertEqual(sorted(streams), [0, 1, 2])
        for t in (1, 2):
            self.assertEqual(indices[t], list(range(len(indices[t]))), t)
        seen = {t: [token(fn, line) for fn, line in streams[t]] for t in (1, 2)}
        worker = {t: 0 if any(x.startswith("I100") for x in seen[t]) else 1 for t in (1, 2)}
        self.assertEqual(sorted(worker.values()), [0, 1])
        for t in (1, 2):
            want = logged[worker[t]]
            self.assertEqual(len(seen[t]), len(want), t)
            self.assertEqual(seen[t], want, t)
            # Long runs of failed polls and polls that found their message both occur.
            self.assertGreater(want.count(f"I{100 * (worker[t] + 1)}0"), 500)
            self.assertGreater(sum(x.endswith("1") and x.startswith("I") for x in want), 10)
            self.assertGreater(want.count("T0"), 500)
        check = tool("check", trace).stdout
        self.assertRegex(check, r"rank 0: complete \(%d events, (\d+) chunks"
                         % sum(len(v) for v in streams.values()))

    def test_sigkill_keeps_the_open_run_up_to_the_last_flush(self):
        # Rank 0 polls for 300 ms, then sleeps 300 ms without an MPI call (its run of polls is
        # still open: no later event closed it) and is killed with SIGKILL. The flush every
        # 50 ms (half the interval) must have written every poll.
        trace = self.tmp / "killed"
        rec = harness.record(trace, 2, POLLING, 300, "kill", options=["--flush-ms", "100"],
                             check=False)
        self.assertNotEqual(rec.returncode, 0)
        polls = int(re.search(r"polls=(\d+)", rec.stderr).group(1))
        self.assertGreater(polls, 1000)
        show = tool("show", trace, "--rank", 0, check=False)
        lines = [line for line in show.stdout.splitlines() if " MPI_Iprobe " in line]
        self.assertEqual(len(lines), polls, show.stderr)
        # Each its own index, after the events before the loop.
        idx = [int(re.match(r"r0 t0 #(\d+) ", line).group(1)) for line in lines]
        self.assertEqual(idx, list(range(idx[0], idx[0] + polls)))


if __name__ == "__main__":
    harness.main()
