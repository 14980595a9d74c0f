"""Per-call extras ride on the stream's commit-work flag (ThreadStream::set_extras_every_call):
with call sites on, every event must carry its site, including the calls right after one whose
commit cleared the flag's other work (a send hash taken before the call, as
MPI_Sendrecv_replace takes it), and a program with no extras must carry none."""
import os
import re

import harness

PROGRAMS = os.environ.get("ENCORE_TEST_PROGRAMS", "build/tests/programs")
EVENT = re.compile(r"^r(\d+) t\d+ #\d+ (MPI_\w+) ")


def events(trace, rank):
    out = harness.run([harness.TOOL, "show", str(trace), "--rank", str(rank)]).stdout
    return [(m.group(2), line) for line in out.splitlines() if (m := EVENT.match(line))]


class ExtrasEveryCall(harness.TempDirTest):
    def test_every_event_has_its_site(self):
        trace = self.tmp / "sites"
        harness.record(trace, 2, harness.example("ring"), options=["--callsites"])
        for rank in (0, 1):
            evs = events(trace, rank)
            self.assertGreater(len(evs), 20)
            missing = [line for _, line in evs if " site=" not in line]
            self.assertEqual(missing, [], f"rank {rank}")
            self.assertTrue(any(fn == "MPI_Sendrecv" for fn, _ in evs))

    def test_sendrecv_replace_keeps_its_hash_and_site(self):
        # test_crash_mid: 50 MPI_Sendrecv_replace (a send hash before the call) on each rank,
        # then rank 1 dies of SIGSEGV; its signal handler writes every event.
        trace = self.tmp / "replace"
        harness.record(trace, 2, f"{PROGRAMS}/test_crash_mid", 50,
                       options=["--callsites", "--flush-ms", "600000"], check=False)
        out = harness.run([harness.TOOL, "show", str(trace), "--rank", "1"], check=False).stdout
        evs = [l for l in out.splitlines() if re.match(r"r1 t0 #\d+ MPI_Sendrecv_replace ", l)]
        self.assertEqual(len(evs), 50)
        for line in evs:
            self.assertIn(" site=", line)
            self.assertRegex(line, r"sent 8B hash=[0-9a-f]{16}")

    def test_no_sites_without_the_option(self):
        trace = self.tmp / "plain"
        harness.record(trace, 2, harness.example("ring"))
        evs = events(trace, 0)
        self.assertGreater(len(evs), 20)
        self.assertEqual([line for _, line in evs if " site=" in line], [])


if __name__ == "__main__":
    harness.main()
