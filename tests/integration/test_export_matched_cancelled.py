"""The exporters on receives beyond Recv/Irecv: messages matched by MPI_Mprobe/MPI_Improbe and
received with MPI_Mrecv/MPI_Imrecv, and receives cancelled with MPI_Cancel (whose status keeps
the last real message's source and tag). tests/programs/matched_cancelled.c at 3 ranks,
recorded once: its SimGrid export must replay to the end in SimGrid's own `smpirun -replay`,
its Chrome flows must join exactly the 5 messages to the calls that received them (none ends
in a cancelled request's completion), OTF2 (otf2-print) must show the matched receives and the
cancellations, and DUMPI must write the matched receives as the Recv/Irecv they amount to."""
import collections
import json
import os
import pathlib
import re
import shutil
import tempfile
import unittest

import dumpi_reader
import harness

PROGRAM = str(pathlib.Path(os.environ.get("ENCORE_TEST_PROGRAMS", "build/tests/programs"))
              / "test_matched_cancelled")
SMPIRUN = shutil.which("smpirun")
OTF2_PRINT = shutil.which("otf2-print")
PLATFORM = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
<zone id="z" routing="Full">
  <host id="h0" speed="1Gf"/>
  <host id="h1" speed="1Gf"/>
  <host id="h2" speed="1Gf"/>
  <link id="l01" bandwidth="1GBps" latency="1us"/>
  <link id="l02" bandwidth="1GBps" latency="1us"/>
  <link id="l12" bandwidth="1GBps" latency="1us"/>
  <route src="h0" dst="h1"><link_ctn id="l01"/></route>
  <route src="h0" dst="h2"><link_ctn id="l02"/></route>
  <route src="h1" dst="h2"><link_ctn id="l12"/></route>
</zone>
</platform>
"""
# The messages rank 0 receives: (source, tag, ints).
MESSAGES = {(1, 10, 5), (2, 10, 6), (1, 30, 7), (2, 40, 9), (2, 40, 3)}


def tool(*args, check=True):
    return harness.run([harness.TOOL, *map(str, args)], check=check, timeout=300)


class MatchedAndCancelled(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        harness.TMP_ROOT.mkdir(parents=True, exist_ok=True)
        cls.root = pathlib.Path(tempfile.mkdtemp(prefix="export-matched-", dir=harness.TMP_ROOT))
        cls.trace = cls.root / "t"
        p = harness.record(cls.trace, 3, PROGRAM)
        assert "matched_cancelled: 5 messages, 2 cancelled" in p.stdout, p.stdout + p.stderr

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.root, ignore_errors=True)

    def test_capture_records_only_defined_status_fields(self):
        # A cancelled receive's completion: the cancelled bit and nothing else (its status still
        # holds the last message's source, tag and count). A probe completes no request: never
        # "cancelled", whatever MPICH left in that bit. Stats count nothing received there.
        shown = tool("show", "--rank", 0, self.trace).stdout
        completions = re.findall(r" MPI_(?:Wait|Test) .*status=\{([^}]*cancelled)\}", shown)
        self.assertEqual(completions, ["src=0 tag=0 0B cancelled"] * 2, shown)
        probes = [l for l in shown.splitlines() if re.search(r" MPI_I?m?probe ", l, re.I)]
        self.assertGreaterEqual(len(probes), 4, shown)
        for line in probes:
            self.assertNotIn("cancelled", line)

    def test_simgrid_replays_to_the_end(self):
        out = self.root / "sg"
        p = tool("export", "--to", "simgrid", self.trace, out)
        self.assertIn("note: cancelled sends and receives are left out", p.stdout)
        rank0 = (out / "rank-00000.txt").read_text()
        # Every message received once, with its source and tag (and the receive buffer's
        # size); nothing for the cancelled receives (tags 98, 99) nor MPI_MESSAGE_NO_PROC.
        received = re.findall(r"^0 (i?recv) (\d+) (\d+) (\d+)$", rank0, re.M)
        self.assertEqual(sorted((int(s), int(t)) for _, s, t, _ in received),
                         sorted((s, t) for s, t, _ in MESSAGES), rank0)
        # The matched receives (Mrecv: recv, Imrecv: irecv) are sized as the probe found.
        self.assertEqual(sorted((a, int(s), int(t), int(b) // 4) for a, s, t, b in received
                                if (int(s), int(t)) != (2, 40) or a == "irecv"),
                         [("irecv", 1, 30, 7), ("irecv", 2, 40, 9), ("recv", 1, 10, 5),
                          ("recv", 2, 10, 6)], rank0)
        self.assertEqual(len(re.findall(r"^0 irecv ", rank0, re.M)),
                         len(re.findall(r"^0 wait ", rank0, re.M)), rank0)
        sent = 0
        for rank in (1, 2):
            sent += len(re.findall(r"^\d+ i?send 0 ", (out / f"rank-0000{rank}.txt").read_text(),
                                   re.M))
        self.assertEqual(sent, len(MESSAGES))
        if not SMPIRUN:
            self.skipTest("smpirun not installed (Debian: libsimgrid-dev)")
        (self.root / "p.xml").write_text(PLATFORM)
        (self.root / "hosts").write_text("h0\nh1\nh2\n")
        sim = harness.run([SMPIRUN, "-np", "3", "-platform", str(self.root / "p.xml"),
                           "-hostfile", str(self.root / "hosts"), "-replay",
                           str(out / "index.txt"), "--cfg=network/model:CM02"],
                          cwd=self.root, check=False, timeout=300)
        output = sim.stdout + sim.stderr
        self.assertEqual(sim.returncode, 0, output[-3000:])
        self.assertRegex(output, r"Simulation time [0-9.]+", output[-3000:])

    def test_chrome_flows_are_the_messages(self):
        out = self.root / "t.json"
        tool("export", "--to", "chrome", self.trace, out)
        events = json.loads(out.read_text())["traceEvents"]
        starts = collections.defaultdict(list)
        ends = collections.defaultdict(list)
        for e in events:
            if e["ph"] == "s":
                starts[e["id"]].append(e)
            elif e["ph"] == "f":
                ends[e["id"]].append(e)
        # One flow per message, each with one start and one end.
        self.assertEqual(len(starts), len(MESSAGES))
        self.assertEqual(sorted(starts), sorted(ends))
        self.assertTrue(all(len(v) == 1 for v in list(starts.values()) + list(ends.values())))
        # Rank 0's calls in order, and the call each flow ends in (the slice starting there).
        calls = sorted((e for e in events if e["ph"] == "X" and e["pid"] == 0
                        and e["cat"] != "compute"), key=lambda e: e["args"]["index"])
        at = {(e["tid"], e["ts"]): e for e in calls}
        ended = collections.Counter()
        for (end,) in ends.values():
            self.assertEqual(end["pid"], 0, end)
            ended[at[(end["tid"], end["ts"])]["args"]["index"]] += 1
        self.assertTrue(all(n == 1 for n in ended.values()), ended)
        # The calls that received a message: the Mrecvs, the Recv, and the Wait/Test that
        # completed each Imrecv; the Wait/Test that completed a cancelled receive did not.
        names = [c["name"] for c in calls]
        received, cancelled = set(), set()
        for i, name in enumerate(names):
            if name in ("MPI_Mrecv", "MPI_Recv") and calls[i]["args"].get("received_bytes"):
                received.add(calls[i]["args"]["index"])
            if name in ("MPI_Imrecv", "MPI_Cancel"):
                j = i + 1
                while j + 1 < len(names) and names[j + 1] in ("MPI_Wait", "MPI_Test"):
                    j += 1
                self.assertIn(names[j], ("MPI_Wait", "MPI_Test"), names)
                (received if name == "MPI_Imrecv" else cancelled).add(calls[j]["args"]["index"])
        self.assertEqual(names.count("MPI_Mrecv"), 3)  # two messages, MPI_MESSAGE_NO_PROC
        self.assertEqual(len(received), len(MESSAGES), names)
        self.assertEqual(len(cancelled), 2, names)
        self.assertEqual(set(ended), received)
        # Flows start at rank 1's and rank 2's sends.
        senders = collections.Counter(s["pid"] for (s,) in starts.values())
        self.assertEqual(senders, {1: 2, 2: 3})

    def test_otf2_matched_receives_and_cancellations(self):
        if not OTF2_PRINT:
            self.skipTest("otf2-print not installed (Debian: otf2-tools)")
        out = self.root / "otf2"
        tool("export", "--to", "otf2", self.trace, out)
        p = harness.run([OTF2_PRINT, "-Werror", str(out / "traces.otf2")], timeout=300)
        rank0 = [line.split() for line in p.stdout.splitlines()
                 if re.match(r"^[A-Z_]+\s+0\s+\d+\s", line)]
        counts = collections.Counter(fields[0] for fields in rank0)
        # Two Mrecvs and the Recv; two Imrecvs; the two cancelled Irecvs.
        self.assertEqual(counts["MPI_RECV"], 3, counts)
        self.assertEqual(counts["MPI_IRECV_REQUEST"], 4, counts)
        self.assertEqual(counts["MPI_IRECV"], 2, counts)
        self.assertEqual(counts["MPI_REQUEST_CANCELLED"], 2, counts)
        received = re.findall(r"^MPI_I?RECV\s+0\s+\d+\s+Sender: (\d+).*?Tag: (\d+)", p.stdout, re.M)
        self.assertEqual(sorted((int(s), int(t)) for s, t in received),
                         sorted((s, t) for s, t, _ in MESSAGES))

    def test_dumpi_writes_matched_receives(self):
        out = self.root / "dumpi"
        p = tool("export", "--to", "dumpi", self.trace, out)
        self.assertIn("are written as Probe/Iprobe and Recv/Irecv", p.stdout)
        records = dumpi_reader.read_bin(out / "encore-0000.bin")["records"]
        names = [r["name"] for r in records]
        # Mprobe x2 (the MPI_PROC_NULL one is left out), Improbe x2 (each successful one).
        self.assertEqual(names.count("MPI_Probe"), 2, names)
        self.assertGreaterEqual(names.count("MPI_Iprobe"), 2, names)
        received = [(r["source"], r["tag"]) for r in records
                    if r["name"] in ("MPI_Recv", "MPI_Irecv") and r["tag"] not in (98, 99)]
        self.assertEqual(sorted(received), sorted((s, t) for s, t, _ in MESSAGES))
        # The cancelled receives are there as called, with their MPI_Cancel.
        self.assertEqual(names.count("MPI_Cancel"), 2, names)


if __name__ == "__main__":
    harness.main()
