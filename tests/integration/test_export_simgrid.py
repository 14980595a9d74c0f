"""`encore export --to simgrid` and `encore simulate`, checked with SimGrid's own `smpirun
-replay`: hand-made traces whose simulated time is known analytically (with CM02 and no cross
traffic, n bytes over a B byte/s, L s link take L + n/B), and recorded examples that must
replay to the end."""
import json
import os
import pathlib
import re
import shutil
import unittest

import harness

TOOL = harness.TOOL
MAKE_TRACE = pathlib.Path(os.environ.get("ENCORE_TEST_PROGRAMS", "build/tests/programs")) / "test_make_trace"
SMPIRUN = shutil.which("smpirun")
EXACT = ["--cfg=network/model:CM02", "--cfg=network/crosstraffic:0"]
# `encore simulate` keeps its work directory after a failure: keep those in the tests' scratch.
harness.TMP_ROOT.mkdir(parents=True, exist_ok=True)
os.environ["TMPDIR"] = str(harness.TMP_ROOT)

# Two hosts joined by one 1 GBps, 1 us link.
PLATFORM = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
<zone id="z" routing="Full">
  <host id="h0" speed="1Gf"/>
  <host id="h1" speed="1Gf"/>
  <link id="l" bandwidth="1GBps" latency="1us"/>
  <route src="h0" dst="h1"><link_ctn id="l"/></route>
</zone>
</platform>
"""


def tool(*args, check=True):
    return harness.run([TOOL, *map(str, args)], check=check, timeout=300)


def simulated_time(output):
    """SimGrid's "Simulation time T" (seconds); fails the test if it is missing."""
    m = re.search(r"Simulation time ([0-9.]+)", output)
    if not m:
        raise AssertionError("no 'Simulation time' in SimGrid's output:\n" + output[-3000:])
    return float(m.group(1))


class SimGridTest(harness.TempDirTest):
    def setUp(self):
        super().setUp()
        if not SMPIRUN:
            self.skipTest("smpirun not installed (Debian: libsimgrid-dev)")
        (self.tmp / "p.xml").write_text(PLATFORM)
        (self.tmp / "hosts").write_text("h0\nh1\n")

    def make(self, name, *args):
        trace = self.tmp / name
        harness.run([str(MAKE_TRACE), trace, *map(str, args)])
        return trace

    def export(self, trace):
        out = self.tmp / (trace.name + "-sg")
        p = tool("export", "--to", "simgrid", trace, out)
        return out, p

    def replay(self, out, nprocs=2, platform=None, hosts=None):
        p = harness.run([SMPIRUN, "-np", str(nprocs), "-platform", str(platform or self.tmp / "p.xml"),
                         "-hostfile", str(hosts or self.tmp / "hosts"), "-replay",
                         str(out / "index.txt"), *EXACT], cwd=self.tmp, timeout=300)
        return simulated_time(p.stdout + p.stderr)

    def test_pingpong_files_and_time(self):
        # Rank 0 computes 2 ms (2e6 flops at the default 1e9 flop/s), then sends 1e6 bytes.
        trace = self.make("pp", "pingpong", 1000000, 2000000)
        out, p = self.export(trace)
        self.assertIn("simgrid: 6 events -> 7 records", p.stdout)
        index = (out / "index.txt").read_text()
        files = index.splitlines()
        self.assertEqual([pathlib.Path(f).name for f in files], ["rank-00000.txt", "rank-00001.txt"])
        self.assertTrue(index.endswith("\n"))
        self.assertEqual(pathlib.Path(files[0]).read_text(),
                         "0 init\n0 compute 2000000\n0 send 1 7 1000000\n0 finalize\n")
        self.assertEqual(pathlib.Path(files[1]).read_text(),
                         "1 init\n1 recv 0 7 1000000\n1 finalize\n")
        self.assertAlmostEqual(self.replay(out), 0.002 + 0.001001, places=6)

    def test_predicted_and_replayed_kinds(self):
        # The kind of trace changes nothing in what is exported.
        trace = self.make("pp", "pingpong", 1000000, 2000000)
        out, _ = self.export(trace)
        expected = (out / "rank-00000.txt").read_text()
        manifest = json.loads((trace / "manifest.json").read_text())
        for kind in ("predicted", "replay"):
            manifest["kind"] = kind
            if kind == "replay":
                manifest["replay_of"] = {"trace": str(trace), "rank": 0}
            (trace / "manifest.json").write_text(json.dumps(manifest))
            again = self.tmp / kind
            tool("export", "--to", "simgrid", trace, again)
            self.assertEqual((again / "rank-00000.txt").read_text(), expected)

    def test_sleep_instead_of_compute(self):
        trace = self.make("pp", "pingpong", 1000000, 3000000)
        out = self.tmp / "sleep"
        tool("export", "--to", "simgrid", "--sleep", trace, out)
        self.assertIn("0 sleep 0.003\n", (out / "rank-00000.txt").read_text())
        self.assertAlmostEqual(self.replay(out), 0.003 + 0.001001, places=6)

    def test_host_speed_scales_flops(self):
        trace = self.make("pp", "pingpong", 1000, 2000000)
        out = self.tmp / "fast"
        tool("export", "--to", "simgrid", "--host-speed", "4e9", trace, out)
        self.assertIn("0 compute 8000000\n", (out / "rank-00000.txt").read_text())

    def test_nonblocking_with_wildcard(self):
        # Both ranks post an irecv (rank 1's is MPI_ANY_SOURCE/MPI_ANY_TAG: the exporter takes
        # source and tag from the completing Waitall), isend 1e6 bytes and wait for both.
        trace = self.make("nb", "nonblocking", 1000000)
        out, _ = self.export(trace)
        self.assertEqual((out / "rank-00001.txt").read_text(),
                         "1 init\n1 irecv 0 3 1000000\n1 isend 0 4 1000000\n"
                         "1 wait 0 1 3\n1 wait 1 0 4\n1 finalize\n")
        # The two messages cross on the one shared link at the same time: 2e6 bytes at
        # 1 GBps, plus the latency.
        self.assertAlmostEqual(self.replay(out), 0.002001, places=6)

    def test_persistent_requests(self):
        # Send_init/Recv_init started and waited twice: two 1e6-byte messages, one after the
        # other, after the 1 us of the *_init call (a call with no action counts as compute).
        trace = self.make("ps", "persistent", 1000000)
        out, _ = self.export(trace)
        self.assertEqual((out / "rank-00000.txt").read_text(),
                         "0 init\n0 compute 1000\n0 isend 1 5 1000000\n0 wait 0 1 5\n"
                         "0 isend 1 5 1000000\n0 wait 0 1 5\n0 finalize\n")
        self.assertEqual((out / "rank-00001.txt").read_text(),
                         "1 init\n1 compute 1000\n1 irecv 0 5 1000000\n1 wait 0 1 5\n"
                         "1 irecv 0 5 1000000\n1 wait 0 1 5\n1 finalize\n")
        self.assertAlmostEqual(self.replay(out), 0.000001 + 2 * 0.001001, places=6)

    def test_simulate_platform_and_topologies(self):
        trace = self.make("pp", "pingpong", 1000000, 2000000)
        p = tool("simulate", trace, "--platform", self.tmp / "p.xml", "--hostfile",
                 self.tmp / "hosts", "--topology", "flat", "--topology", "torus:2x2",
                 "--topology", "fat-tree:2;2,2;1,2;1,1", "--bandwidth", "1GBps",
                 "--latency", "1us", "--cfg", "network/model:CM02", "--cfg", "network/crosstraffic:0")
        rows = dict(re.findall(r"^(\S+)\s+([0-9.]+)$", p.stdout, re.M))
        self.assertAlmostEqual(float(rows[str(self.tmp / "p.xml")]), 0.003001, places=6)
        # A flat cluster: the message crosses both hosts' private links (2 latencies).
        self.assertAlmostEqual(float(rows["flat"]), 0.003002, places=6)
        self.assertIn("torus:2x2", rows)
        self.assertIn("fat-tree:2;2,2;1,2;1,1", rows)
        # Fat tree: up to the switch and down again, 2 links, 2 latencies.
        self.assertAlmostEqual(float(rows["fat-tree:2;2,2;1,2;1,1"]), 0.003002, places=6)

    def test_simulate_rank_map_and_errors(self):
        trace = self.make("pp", "pingpong", 1000, 0)
        keep = self.tmp / "keep"
        p = tool("simulate", trace, "--topology", "torus:4", "--map", "0,2", "--keep", keep)
        self.assertRegex(p.stdout, r"(?m)^torus:4\s+[0-9.]+$")
        self.assertEqual((keep / "hosts-0.txt").read_text(), "node-0\nnode-2\n")
        self.assertIn('topology="TORUS" topo_parameters="4"', (keep / "platform-0.xml").read_text())
        bad = tool("simulate", trace, "--topology", "torus:1", check=False)
        self.assertEqual(bad.returncode, 2)
        self.assertIn("1 hosts for 2 ranks", bad.stderr)
        bad = tool("simulate", trace, "--topology", "ring", check=False)
        self.assertEqual(bad.returncode, 2)
        self.assertIn("unknown topology 'ring'", bad.stderr)
        bad = tool("simulate", trace, "--topology", "flat", "--map", "0,9", check=False)
        self.assertIn("outside the cluster", bad.stderr)
        # A SimGrid failure is reported with SimGrid's own line, and exit code 1.
        broken = self.tmp / "broken.xml"
        broken.write_text("<platform version='4.1'><zone id='z' routing='Full'>")
        bad = tool("simulate", trace, "--platform", broken, "--hostfile", self.tmp / "hosts",
                   "--keep", self.tmp / "kept", check=False)
        self.assertEqual(bad.returncode, 1, bad.stdout + bad.stderr)
        self.assertRegex(bad.stdout, r"failed: .+")
        self.assertIn(f"(see {self.tmp / 'kept' / 'smpirun-0.log'})", bad.stdout)
        # Nothing is left behind by the runs that had nothing to keep.
        self.assertEqual(list(harness.TMP_ROOT.glob("encore-simulate-*")), [])

    def test_simulate_reports_a_deadlock(self):
        # SimGrid exits 0 after a deadlock; simulate must still call it a failure.
        trace = self.make("mm", "mismatch", 1000)
        p = tool("simulate", trace, "--topology", "flat", check=False)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertRegex(p.stdout, r"(?m)^flat\s+failed: .*Deadlock detected")
        kept = re.search(r"SimGrid's inputs and logs kept in (\S+)", p.stdout)
        self.assertTrue(kept and (pathlib.Path(kept.group(1)) / "smpirun-0.log").is_file(), p.stdout)
        shutil.rmtree(kept.group(1))

    def test_export_errors(self):
        bad = tool("export", "--to", "simgrid", self.tmp / "missing", self.tmp / "o", check=False)
        self.assertNotEqual(bad.returncode, 0)
        self.assertEqual(len(bad.stderr.strip().splitlines()), 1, bad.stderr)
        self.assertIn("missing", bad.stderr)
        trace = self.make("pp", "pingpong", 1000, 0)
        (self.tmp / "file").write_text("x")
        bad = tool("export", "--to", "simgrid", trace, self.tmp / "file", check=False)
        self.assertNotEqual(bad.returncode, 0)
        self.assertIn("exists and is not an empty directory", bad.stderr)
        # Nor into a directory that holds something (as OTF2 and DUMPI): it is left alone.
        (self.tmp / "full").mkdir()
        (self.tmp / "full" / "keep.txt").write_text("keep")
        bad = tool("export", "--to", "simgrid", trace, self.tmp / "full", check=False)
        self.assertNotEqual(bad.returncode, 0)
        self.assertIn("exists and is not an empty directory", bad.stderr)
        self.assertEqual(sorted(p.name for p in (self.tmp / "full").iterdir()), ["keep.txt"])


class RecordedExamples(harness.TempDirTest):
    """Recorded runs of the examples export to traces SimGrid replays to the end."""

    def setUp(self):
        super().setUp()
        if not SMPIRUN:
            self.skipTest("smpirun not installed (Debian: libsimgrid-dev)")

    def check_example(self, name, *args):
        trace = self.tmp / name
        harness.record(trace, 2, harness.example(name), *args)
        out = self.tmp / (name + "-sg")
        p = tool("export", "--to", "simgrid", trace, out)
        sends = recvs = 0
        for f in sorted(out.glob("rank-*.txt")):
            text = f.read_text()
            self.assertTrue(text.endswith(" finalize\n"), f)
            sends += len(re.findall(r"^\d+ i?send ", text, re.M))
            recvs += len(re.findall(r"^\d+ i?recv ", text, re.M))
        self.assertEqual(sends, recvs)
        sim = tool("simulate", trace, "--topology", "flat", "--topology", "torus:2")
        rows = re.findall(r"^(flat|torus:2)\s+([0-9.]+)$", sim.stdout, re.M)
        self.assertEqual(len(rows), 2, sim.stdout)
        self.assertTrue(all(float(t) > 0 for _, t in rows), sim.stdout)
        return p

    def test_ring(self):
        self.check_example("ring")
        # 3 token laps, 3 shifts, Ssend, Bsend, Rsend, the edge shift: 10 sends from rank 0.
        text = (self.tmp / "ring-sg" / "rank-00000.txt").read_text()
        self.assertEqual(len(re.findall(r"^0 i?send 1 ", text, re.M)), 10, text)

    def test_halo2d(self):
        self.check_example("halo2d")
        text = (self.tmp / "halo2d-sg" / "rank-00000.txt").read_text()
        self.assertRegex(text, r"(?m)^0 isend 1 \d+ \d+\n")
        self.assertRegex(text, r"(?m)^0 allreduce 8 0\n")

    def test_master_worker(self):
        self.check_example("master_worker", 32, 8, 64)
        # The master's MPI_ANY_SOURCE receives name the worker that sent.
        text = (self.tmp / "master_worker-sg" / "rank-00000.txt").read_text()
        self.assertNotRegex(text, r"(?m)^0 i?recv -")
        self.assertRegex(text, r"(?m)^0 i?recv 1 ")

    def test_collectives(self):
        p = self.check_example("collectives")
        text = (self.tmp / "collectives-sg" / "rank-00000.txt").read_text()
        for action in ("bcast", "reduce", "allreduce", "gather", "scatter", "allgatherv",
                       "alltoall", "alltoallv", "scan", "exscan", "reducescatter"):
            self.assertRegex(text, rf"(?m)^0 {action} ", action)
        # Its sub-communicator collectives cannot be SimGrid actions: the export says so.
        self.assertIn("note: collectives on communicators other than MPI_COMM_WORLD", p.stdout)


if __name__ == "__main__":
    harness.main()
