"""`encore export --to otf2`: ring, halo2d, collectives and a 3-thread program recorded at 2
ranks, exported, and read back with otf2-print (otf2-tools). The archive must print with no INVALID reference, and
per location the events must match the trace as `encore show` prints it: one ENTER/LEAVE
pair per MPI call in the same order and at the same times, message events for every
send/receive that moved data, collective begin/end for every blocking collective."""
import collections
import json
import os
import pathlib
import re
import shutil
import tempfile
import unittest

import harness

P2P_SEND = {"MPI_Send", "MPI_Bsend", "MPI_Ssend", "MPI_Rsend", "MPI_Sendrecv",
            "MPI_Sendrecv_replace"}
P2P_RECV = {"MPI_Recv", "MPI_Sendrecv", "MPI_Sendrecv_replace"}
COLLECTIVES = {"MPI_Barrier", "MPI_Bcast", "MPI_Gather", "MPI_Gatherv", "MPI_Scatter",
               "MPI_Scatterv", "MPI_Allgather", "MPI_Allgatherv", "MPI_Alltoall",
               "MPI_Alltoallv", "MPI_Alltoallw", "MPI_Allreduce", "MPI_Reduce",
               "MPI_Reduce_scatter", "MPI_Reduce_scatter_block", "MPI_Scan", "MPI_Exscan"}
SHOW_LINE = re.compile(r"^r(\d+) t(\d+) #\d+ (MPI_\w+)  (\d+\.\d{6}) ms \+\S+(?:  (.*))?$")
EVENT_LINE = re.compile(r"^([A-Z_]+)\s+(\d+)\s+(\d+)\s+(.*)$")


def tool(*args, check=True):
    return harness.run([harness.TOOL, *map(str, args)], check=check, timeout=300)


def show_calls(trace):
    """{(rank, thread): [(function, start_ns, args text)]} from `encore show`."""
    calls = collections.defaultdict(list)
    for line in tool("show", trace).stdout.splitlines():
        m = SHOW_LINE.match(line)
        if m:
            ns = int(m.group(4).replace(".", ""))
            calls[(int(m.group(1)), int(m.group(2)))].append((m.group(3), ns, m.group(5) or ""))
    return calls


def print_events(archive):
    """(text, {location: [(event, timestamp, attributes)]}) from otf2-print."""
    p = harness.run(["otf2-print", "-Werror", "-A", str(archive)], timeout=300)
    assert "warning" not in p.stderr, p.stderr
    events = collections.defaultdict(list)
    for line in p.stdout.splitlines():
        m = EVENT_LINE.match(line)
        if m:
            events[int(m.group(2))].append((m.group(1), int(m.group(3)), m.group(4)))
    return p.stdout, events


def arg(args, name):
    m = re.search(rf"(?:^| ){name}=(\S+)", args)
    return m.group(1) if m else None


class ExportOtf2(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        harness.TMP_ROOT.mkdir(parents=True, exist_ok=True)
        cls.root = pathlib.Path(tempfile.mkdtemp(prefix="otf2-", dir=harness.TMP_ROOT))
        cls.traces = {}
        for name, args in (("ring", ()), ("halo2d", (64, 20)), ("collectives", ())):
            trace = cls.root / name
            harness.record(trace, 2, harness.example(name), *args)
            cls.traces[name] = trace
        # MPI_THREAD_MULTIPLE: three recording threads per rank, three locations.
        programs = pathlib.Path(os.environ.get("ENCORE_TEST_PROGRAMS", "build/tests/programs"))
        cls.traces["threads"] = cls.root / "threads"
        harness.record(cls.traces["threads"], 2, str(programs / "test_threads"))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.root, ignore_errors=True)

    def export(self, name):
        out = self.root / f"{name}.otf2"
        p = tool("export", "--to", "otf2", self.traces[name], out)
        self.assertRegex(p.stdout, r"^otf2: \d+ events -> \d+ records in ")
        return out / "traces.otf2"

    def check_archive(self, name):
        archive = self.export(name)
        text, events = print_events(archive)
        self.assertNotIn("INVALID", text)
        calls = show_calls(self.traces[name])
        ranks = json.loads((self.traces[name] / "manifest.json").read_text())["ranks"]
        # One location per recorded thread: thread t of rank r is (t << 32) | r.
        self.assertEqual(sorted(events), sorted((t << 32) | r for r, t in calls))
        for (rank, thread), expected in calls.items():
            got = events[(thread << 32) | rank]
            counts = collections.Counter(e[0] for e in got)
            enters = [(e[1], re.search(r'Region: "(\w+)"', e[2]).group(1))
                      for e in got if e[0] == "ENTER"]
            mpi = [(t, r) for t, r in enters if r != "compute"]
            # Same calls in the same order, at the same times (relative to the first call).
            self.assertEqual([r for _, r in mpi], [f for f, _, _ in expected])
            # (Each time t on rank 0's timeline is t + offset(t): harness.offset_at.)
            on_rank0 = [s + harness.offset_at(ranks[rank], s) for _, s, _ in expected]
            self.assertEqual([t - mpi[0][0] for t, _ in mpi], [s - on_rank0[0] for s in on_rank0])
            self.assertEqual(counts["LEAVE"], counts["ENTER"])
            # Timestamps never go backwards within a location.
            times = [e[1] for e in got]
            self.assertEqual(times, sorted(times))
            sends = sum(1 for f, _, a in expected
                        if f in P2P_SEND and arg(a, "dest") not in (None, "MPI_PROC_NULL"))
            recvs = sum(1 for f, _, a in expected
                        if f in P2P_RECV and re.search(r"status=(?:IGNORE)?\{src=\d", a))
            isends = sum(1 for f, _, a in expected
                         if f == "MPI_Isend" and arg(a, "dest") != "MPI_PROC_NULL")
            irecvs = sum(1 for f, _, a in expected
                         if f == "MPI_Irecv" and arg(a, "source") != "MPI_PROC_NULL")
            colls = sum(1 for f, _, _ in expected if f in COLLECTIVES)
            self.assertEqual(counts["MPI_SEND"], sends, f"rank {rank}")
            self.assertEqual(counts["MPI_RECV"], recvs, f"rank {rank}")
            self.assertEqual(counts["MPI_ISEND"], isends, f"rank {rank}")
            self.assertEqual(counts["MPI_ISEND_COMPLETE"], isends, f"rank {rank}")
            self.assertEqual(counts["MPI_IRECV_REQUEST"], irecvs, f"rank {rank}")
            self.assertEqual(counts["MPI_IRECV"], irecvs, f"rank {rank}")
            self.assertEqual(counts["MPI_COLLECTIVE_BEGIN"], colls, f"rank {rank}")
            self.assertEqual(counts["MPI_COLLECTIVE_END"], colls, f"rank {rank}")
        return text, events

    def test_ring(self):
        _, events = self.check_archive("ring")
        # Rank 0 sends its 1000 doubles of the Sendrecv shift to rank 1: 8000 bytes.
        sends = [e[2] for e in events[0] if e[0] == "MPI_SEND"]
        self.assertTrue(any("Length: 8000" in s for s in sends), sends)

    def test_halo2d(self):
        self.check_archive("halo2d")

    def test_threads(self):
        _, events = self.check_archive("threads")
        self.assertEqual(len(events), 6)

    def test_collectives_and_communicators(self):
        text, events = self.check_archive("collectives")
        # Comm_split into rows and columns: communicators beyond WORLD and SELF, used by the
        # collectives on them.
        comms = re.findall(r"^COMM\s+(\d+)\s+Name: \"([^\"]*)\"", text, re.M)
        self.assertGreater(len(comms), 2, text[:2000])
        used = {int(m) for e in events[0] if e[0] == "MPI_COLLECTIVE_END"
                for m in re.findall(r"Communicator: \"[^\"]*\" <(\d+)>", e[2])}
        self.assertTrue(used - {0, 1}, used)

    def test_cut_trace_exports_what_it_holds(self):
        cut = self.root / "ring-cut"
        shutil.copytree(self.traces["ring"], cut)
        events = cut / "rank-00001.events"
        events.write_bytes(events.read_bytes()[:-100])  # the trailer and part of a chunk
        out = self.root / "ring-cut.otf2"
        p = tool("export", "--to", "otf2", cut, out, check=False)
        self.assertEqual(p.returncode, 1, p.stderr)  # written, but the trace is not whole
        self.assertRegex(p.stderr, r"encore: .*rank-00001\.events: .*; exported up to there")
        text, events_by_location = print_events(out / "traces.otf2")
        self.assertNotIn("INVALID", text)
        full = show_calls(self.traces["ring"])[(1, 0)]
        enters = [e for e in events_by_location[1] if e[0] == "ENTER" and "compute" not in e[2]]
        self.assertLess(len(enters), len(full))
        self.assertGreater(len(enters), 0)

    def test_replay_profile(self):
        # A replay profile holds rank 1 only; rank 0 still gets an (empty) location.
        prof = self.root / "halo-prof1"
        harness.run([harness.TOOL, "replay", "--rank", "1", "-o", str(prof), "--wtime",
                     "recorded", str(self.traces["halo2d"]), "--", harness.example("halo2d"),
                     "64", "20"], timeout=120)
        out = self.root / "halo-prof1.otf2"
        tool("export", "--to", "otf2", prof, out)
        text, events = print_events(out / "traces.otf2")
        self.assertNotIn("INVALID", text)
        self.assertEqual(sorted(events), [1])
        self.assertRegex(text, r"LOCATION\s+0\s+Name: \"rank 0\".*# Events: 0,")
        calls = show_calls(prof)[(1, 0)]
        enters = [e for e in events[1] if e[0] == "ENTER" and "compute" not in e[2]]
        self.assertEqual(len(enters), len(calls))

    def test_refuses_a_non_empty_output(self):
        out = self.root / "busy"
        out.mkdir()
        (out / "keep").write_text("x")
        p = tool("export", "--to", "otf2", self.traces["ring"], out, check=False)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("exists and is not an empty directory", p.stderr)
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)

    def test_missing_trace(self):
        p = tool("export", "--to", "otf2", self.root / "nope", self.root / "nope.otf2",
                 check=False)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("nope", p.stderr)
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)


if __name__ == "__main__":
    harness.main()
