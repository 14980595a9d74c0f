"""The `encore` tool end to end: `encore record` runs example_ring at 2 ranks, then show,
stats, check and digest read the trace back; record passes exit codes through, makes a dated
directory without -o, and forwards its options to the capture library."""
import json
import os
import pathlib
import re
import shutil
import tempfile
import unittest

import harness

TOOL = harness.TOOL


def tool(*args, check=True, **kw):
    return harness.run([TOOL, *map(str, args)], check=check, timeout=120, **kw)


class ToolOnRing(unittest.TestCase):
    """One recording of example_ring (3 laps, n=1000) shared by the read-only tests."""

    @classmethod
    def setUpClass(cls):
        harness.TMP_ROOT.mkdir(parents=True, exist_ok=True)
        cls.root = pathlib.Path(tempfile.mkdtemp(prefix="tool-ring-", dir=harness.TMP_ROOT))
        cls.trace = cls.root / "ring"
        cls.rec = harness.record(cls.trace, 2, harness.example("ring"))
        cls.digests = harness.digests(cls.rec.stdout)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.root, ignore_errors=True)

    def test_record_wrote_a_trace(self):
        self.assertEqual(sorted(self.digests), [0, 1], self.rec.stdout)
        for name in ("manifest.json", "rank-00000.events", "rank-00000.payload",
                     "rank-00001.events", "rank-00001.payload"):
            self.assertTrue((self.trace / name).is_file(), name)
        manifest = json.loads((self.trace / "manifest.json").read_text())
        self.assertEqual(manifest["nprocs"], 2)

    def test_check(self):
        p = tool("check", self.trace)
        self.assertEqual(p.stderr, "")
        lines = p.stdout.splitlines()
        self.assertEqual(len(lines), 2, p.stdout)
        # rank 0 receives 3 tokens (8 B), 3 shifts (8000 B), the Ssend ints (16 B), the Bsend
        # array (8000 B), the Rsend value (8 B), nothing from MPI_PROC_NULL, and the gather
        # of 2 x 2 uint64 (32 B).
        self.assertRegex(lines[0], r"^rank 0: complete \(48 events, \d+ chunks, 32080 payload bytes\)$")
        self.assertRegex(lines[1], r"^rank 1: complete \(48 events, \d+ chunks, \d+ payload bytes\)$")

    def test_digest_matches_the_program(self):
        p = tool("digest", self.trace, "--until-last", "MPI_Gather")
        got = dict(re.findall(r"^digest rank=(\d+) recv=([0-9a-f]{16})$", p.stdout, re.M))
        self.assertEqual({int(r): d for r, d in got.items()},
                         {r: d[0] for r, d in self.digests.items()})
        one = tool("digest", self.trace, "--rank", 1, "--until-last", "Gather")
        self.assertEqual(one.stdout.strip(), f"digest rank=1 recv={self.digests[1][0]}")
        # Without --until-last the gathered digests are hashed too: a different value.
        everything = tool("digest", self.trace, "--rank", 0).stdout
        self.assertNotIn(self.digests[0][0], everything)

    def test_show(self):
        p = tool("show", self.trace)
        out = p.stdout
        self.assertEqual(p.stderr, "")
        self.assertEqual(len(re.findall(r"^== rank \d ", out, re.M)), 2)
        calls = [l for l in out.splitlines() if re.match(r"^r\d t\d+ #\d+ MPI_", l)]
        self.assertEqual(len(calls), 96)
        sendrecv = [l for l in calls if l.startswith("r0 ") and " MPI_Sendrecv " in l]
        self.assertEqual(len(sendrecv), 3)
        self.assertRegex(
            sendrecv[0],
            r"^r0 t0 #\d+ MPI_Sendrecv  \d+\.\d{6} ms \+[\d.]+(ns|us|ms|s)  sendcount=1000 "
            r"sendtype=MPI_DOUBLE dest=1 sendtag=2 recvcount=1000 recvtype=MPI_DOUBLE source=1 "
            r"recvtag=2 comm=MPI_COMM_WORLD status=\{src=1 tag=2 8000B\} recv 8000B "
            r"sent 8000B hash=[0-9a-f]{16}$")
        # MPI_PROC_NULL by name, the Irecv request referenced by the Wait that completes it.
        self.assertRegex(out, r"r0 t0 #\d+ MPI_Recv .*source=MPI_PROC_NULL")
        irecv = re.search(r"^r0 t0 #(\d+) MPI_Irecv .* request=req@#(\d+)$", out, re.M)
        self.assertIsNotNone(irecv)
        self.assertEqual(irecv.group(1), irecv.group(2))
        self.assertRegex(out, rf"r0 t0 #\d+ MPI_Wait  .* request=req@#{irecv.group(1)} ")

    def test_show_selection_and_payload(self):
        p = tool("show", self.trace, "--rank", 1, "--from", 10, "--count", 5, "--payload")
        calls = [l for l in p.stdout.splitlines() if l.startswith("r1 ")]
        self.assertEqual([int(re.match(r"r1 t0 #(\d+)", l).group(1)) for l in calls],
                         [10, 11, 12, 13, 14])
        self.assertNotIn("== rank", p.stdout)
        p = tool("show", self.trace, "--rank", 0, "--payload")
        # The first shift's payload: 1000 doubles, dumped 16 bytes a line, 4 lines.
        m = re.search(r"MPI_Sendrecv .*\n    payload 8000B of MPI_DOUBLE x1000 .*first 64:\n"
                      r"((      [0-9a-f]{4}  .*\n){4})", p.stdout)
        self.assertIsNotNone(m, p.stdout[:3000])
        self.assertIn("--rank 5", tool("show", self.trace, "--rank", 5, check=False).stderr)

    def test_stats(self):
        text = tool("stats", self.trace).stdout
        self.assertRegex(text, r"rank 0: 48 events")
        self.assertRegex(text, r"MPI_Sendrecv +3 ")
        self.assertIn("opaque (not modelled", text)
        doc = json.loads(tool("stats", self.trace, "--json").stdout)
        self.assertEqual(doc["nprocs"], 2)
        r0 = doc["ranks"][0]
        calls = {f["name"]: f["calls"] for f in r0["functions"]}
        self.assertEqual(calls["MPI_Sendrecv"], 3)
        self.assertEqual(calls["MPI_Recv"], 6)
        self.assertEqual(calls["MPI_Gather"], 1)
        self.assertEqual(r0["events"], 48)
        self.assertEqual(r0["bytes_received"], 32080)
        self.assertGreater(r0["bytes_sent"], 0)
        self.assertGreater(r0["mpi_ns"], 0)
        counts = [f["calls"] for f in r0["functions"]]
        self.assertEqual(counts, sorted(counts, reverse=True))
        self.assertEqual(doc["total"]["events"], 96)
        self.assertTrue(r0["complete"])

    def test_help_and_version(self):
        self.assertRegex(tool("--version").stdout, r"^encore \d+\.\d+\.\d+")
        for sub in ("record", "show", "stats", "check", "digest"):
            p = tool(sub, "--help")
            self.assertIn("Exit code", p.stdout, sub)
            self.assertEqual(p.stderr, "")
        self.assertIn("Exit codes", tool("--help").stdout)

    def test_usage_errors(self):
        for args in ((), ("show",), ("show", self.trace, "--bogus"), ("frobnicate",),
                     ("record", "--zstd-level", "99", "--", "true"),
                     ("record", "--payload-ranks", "x", "--", "true"),
                     ("record", "--payload-ranks", "2-1", "--", "true"),
                     ("record", "--payload-ranks", "99999999999", "--", "true"),
                     ("show", self.trace, "--from", "-3"),
                     ("show", self.trace, "--count", "-1"),
                     ("digest", self.trace, "--until-last", "MPI_Nothing")):
            p = tool(*args, check=False)
            self.assertEqual(p.returncode, 2, f"{args}: {p.stderr}")
            self.assertEqual(len(p.stderr.splitlines()), 1, f"{args}: {p.stderr}")
            self.assertTrue(p.stderr.startswith("encore: "), p.stderr)
            self.assertEqual(p.stdout, "")


class Record(harness.TempDirTest):
    def test_exit_code_passthrough(self):
        self.assertEqual(tool("record", "-o", self.tmp / "f", "--", "false", check=False).returncode, 1)
        self.assertEqual(tool("record", "-o", self.tmp / "g", "--", "sh", "-c", "exit 7",
                              check=False).returncode, 7)
        self.assertEqual(tool("record", "-o", self.tmp / "h", "--", "sh", "-c", "kill -TERM $$",
                              check=False).returncode, 128 + 15)
        p = tool("record", "-o", self.tmp / "i", "--", "no-such-command-encore", check=False)
        self.assertEqual(p.returncode, 127)
        self.assertIn("no-such-command-encore", p.stderr)

    def test_refuses_a_non_empty_output_directory(self):
        out = self.tmp / "busy"
        out.mkdir()
        (out / "keep.txt").write_text("mine")
        p = tool("record", "-o", out, "--", "true", check=False)
        self.assertEqual(p.returncode, 2)
        self.assertIn(str(out), p.stderr)
        self.assertIn("--force", p.stderr)
        (out / "rank-00000.events").write_text("old")
        p = tool("record", "-o", out, "--force", "--", "true", check=False)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue((out / "keep.txt").exists())  # only trace files are removed
        self.assertFalse((out / "rank-00000.events").exists())

    def test_dated_directory_without_o(self):
        p = harness.run([TOOL, "record", "--", harness.MPIEXEC, "-n", "2",
                         harness.example("ring")], cwd=self.tmp, timeout=300)
        dirs = list(self.tmp.glob("encore-trace-*"))
        self.assertEqual(len(dirs), 1, dirs)
        self.assertRegex(dirs[0].name, r"^encore-trace-\d{8}-\d{6}$")
        self.assertIn(f"encore: trace in {dirs[0]}", p.stderr)
        self.assertTrue((dirs[0] / "manifest.json").is_file())
        tool("check", dirs[0])
        # A second recording in the same second gets -2 (at the latest).
        q = harness.run([TOOL, "record", "--quiet", "--", "true"], cwd=self.tmp)
        self.assertRegex(q.stderr, r"encore: trace in .*encore-trace-\d{8}-\d{6}(-\d+)?\n")
        self.assertEqual(len(list(self.tmp.glob("encore-trace-*"))), 2)

    def test_options_reach_the_capture_library(self):
        trace = self.tmp / "opts"
        # Relative -o: made absolute against the current directory.
        harness.run([TOOL, "record", "-o", "opts", "--payload-ranks", "1", "--no-send-hash",
                     "--quiet", "--zstd-level", "1", "--", harness.MPIEXEC, "-n", "2",
                     harness.example("ring")], cwd=self.tmp, timeout=300)
        doc = json.loads(tool("stats", trace, "--json").stdout)
        self.assertEqual(doc["ranks"][0]["bytes_received"], 0)
        self.assertGreater(doc["ranks"][1]["bytes_received"], 0)
        self.assertEqual(doc["total"]["bytes_sent"], 0)
        self.assertEqual(doc["total"]["sends"], 0)
        tool("check", trace)


if __name__ == "__main__":
    harness.main()
