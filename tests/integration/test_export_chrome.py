"""`encore export --to chrome`: structural checks of the trace-event JSON on recorded examples
and hand-made traces (every flow start has its end, slices nest per thread, timestamps never go
backwards per thread, one complete event per recorded call), and, when Debian's chromium is
installed, the file loaded by a real browser (fetch + JSON.parse in headless chromium)."""
import functools
import http.server
import json
import os
import pathlib
import re
import shutil
import subprocess
import threading
import unittest

import harness

TOOL = harness.TOOL
MAKE_TRACE = pathlib.Path(os.environ.get("ENCORE_TEST_PROGRAMS", "build/tests/programs")) / "test_make_trace"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def tool(*args, check=True):
    return harness.run([TOOL, *map(str, args)], check=check, timeout=300)


def manifest_events(trace):
    m = json.loads((trace / "manifest.json").read_text())
    return sum(r["events"] for r in m["ranks"])


class ChromeChecks(harness.TempDirTest):
    def export(self, trace):
        out = self.tmp / (trace.name + ".json")
        p = tool("export", "--to", "chrome", trace, out)
        return json.loads(out.read_text()), p, out

    def check_structure(self, doc, nprocs, calls):
        events = doc["traceEvents"]
        names = {e["pid"]: e["args"]["name"] for e in events
                 if e["ph"] == "M" and e["name"] == "process_name"}
        self.assertEqual(sorted(names), list(range(nprocs)))
        self.assertTrue(all(n.startswith(f"rank {p}") for p, n in names.items()))
        slices = [e for e in events if e["ph"] == "X"]
        self.assertEqual(len([e for e in slices if e["cat"] != "compute"]), calls)
        # Timestamps never go backwards within a thread, in file order.
        last = {}
        for e in events:
            if "ts" not in e:
                continue
            key = (e["pid"], e["tid"])
            self.assertGreaterEqual(e["ts"], last.get(key, float("-inf")), e)
            last[key] = e["ts"]
        # Slices nest: on each thread, a slice starting inside another ends inside it.
        by_thread = {}
        for e in slices:
            by_thread.setdefault((e["pid"], e["tid"]), []).append(e)
        for thread in by_thread.values():
            stack = []
            # In integer nanoseconds: the file has microseconds with 3 decimals.
            for e in sorted(thread, key=lambda e: (e["ts"], -e["dur"])):
                start, end = round(e["ts"] * 1000), round((e["ts"] + e["dur"]) * 1000)
                while stack and stack[-1] <= start:
                    stack.pop()
                if stack:
                    self.assertLessEqual(end, stack[-1], e)
                stack.append(end)
        # Every flow start has exactly one end with the same id, and the reverse.
        starts = [e["id"] for e in events if e["ph"] == "s"]
        ends = [e["id"] for e in events if e["ph"] == "f"]
        self.assertEqual(len(starts), len(set(starts)))
        self.assertEqual(sorted(starts), sorted(ends))
        self.assertTrue(all(e.get("bp") == "e" for e in events if e["ph"] == "f"))
        return starts

    def test_hand_made_nonblocking(self):
        trace = self.tmp / "nb"
        harness.run([str(MAKE_TRACE), trace, "nonblocking", "1000"])
        doc, p, _ = self.export(trace)
        flows = self.check_structure(doc, 2, manifest_events(trace))
        # Two messages, one of them received through MPI_ANY_SOURCE/MPI_ANY_TAG.
        self.assertEqual(len(flows), 2)
        self.assertEqual(p.stdout.splitlines()[0], f"chrome: 10 events -> {len(doc['traceEvents'])} records in {self.tmp / 'nb.json'}")
        # The flow of rank 0's message ends on rank 1's Waitall.
        f = [e for e in doc["traceEvents"] if e["ph"] == "f" and e["pid"] == 1][0]
        waitall = [e for e in doc["traceEvents"] if e["ph"] == "X" and e["pid"] == 1
                   and e["name"] == "MPI_Waitall"][0]
        self.assertEqual(f["ts"], waitall["ts"])

    def test_recorded_examples(self):
        # (master_worker's MPI_Iprobe polling makes 10^5 events: too slow for the Python checks;
        # wildcard receives are covered by the hand-made trace.)
        for name, args in (("ring", ()), ("halo2d", ())):
            with self.subTest(name):
                trace = self.tmp / name
                harness.record(trace, 2, harness.example(name), *args)
                doc, _, _ = self.export(trace)
                flows = self.check_structure(doc, 2, manifest_events(trace))
                self.assertGreater(len(flows), 0)
        # ring: rank 0 receives 3 tokens, 3 shifts, Ssend, Bsend, Rsend (the PROC_NULL
        # edge carries nothing): 9 flows end on rank 0.
        doc = json.loads((self.tmp / "ring.json").read_text())
        self.assertEqual(len([e for e in doc["traceEvents"] if e["ph"] == "f" and e["pid"] == 0]), 9)
        # Each shift moves 1000 doubles both ways.
        shifts = [e["args"] for e in doc["traceEvents"] if e.get("name") == "MPI_Sendrecv"]
        self.assertEqual(len(shifts), 6)
        self.assertTrue(all(a["sent_bytes"] == 8000 and a["received_bytes"] == 8000
                            for a in shifts), shifts)

    def test_messages_to_self(self):
        # Each rank sends itself 2 messages a round (MPI_COMM_SELF, and its own world rank), 3
        # rounds: both ends of each are in the same rank's pass, and pair up.
        trace = self.tmp / "self"
        programs = pathlib.Path(os.environ.get("ENCORE_TEST_PROGRAMS", "build/tests/programs"))
        harness.record(trace, 2, str(programs / "test_self_messages"), 3)
        doc, _, _ = self.export(trace)
        flows = self.check_structure(doc, 2, manifest_events(trace))
        self.assertEqual(len(flows), 2 * 2 * 3)

    def test_threads(self):
        # 3 threads per rank, each 50 MPI_Sendrecv with the same thread of the other rank.
        trace = self.tmp / "threads"
        programs = pathlib.Path(os.environ.get("ENCORE_TEST_PROGRAMS", "build/tests/programs"))
        harness.record(trace, 2, str(programs / "test_threads"), 3, 50)
        doc, _, _ = self.export(trace)
        flows = self.check_structure(doc, 2, manifest_events(trace))
        self.assertEqual(len(flows), 2 * 3 * 50)
        tracks = {(e["pid"], e["tid"]) for e in doc["traceEvents"]
                  if e["ph"] == "X" and e["name"] == "MPI_Sendrecv"}
        self.assertEqual(len(tracks), 2 * 3)
        out = self.tmp / "threads-sg"
        p = tool("export", "--to", "simgrid", trace, out)
        self.assertIn("note: calls of threads other than the main one are left out", p.stdout)

    def test_errors(self):
        bad = tool("export", "--to", "chrome", self.tmp / "missing", self.tmp / "o.json", check=False)
        self.assertNotEqual(bad.returncode, 0)
        self.assertEqual(len(bad.stderr.strip().splitlines()), 1, bad.stderr)
        bad = tool("export", "--to", "nope", self.tmp, self.tmp / "o", check=False)
        self.assertEqual(bad.returncode, 2)
        self.assertIn("unknown export format 'nope'", bad.stderr)

    @unittest.skipUnless(CHROMIUM, "chromium not installed")
    def test_loads_in_chromium(self):
        trace = self.tmp / "nb"
        harness.run([str(MAKE_TRACE), trace, "synthetic", "50"])
        doc, _, out = self.export(trace)
        (self.tmp / "page.html").write_text(
            "<html><body>loading<script>"
            "fetch('nb.json').then(r => r.text()).then(t => {"
            " const d = JSON.parse(t); const ev = d.traceEvents;"
            " document.body.textContent = 'events=' + ev.length + ' X=' +"
            " ev.filter(e => e.ph === 'X').length + ' flows=' +"
            " ev.filter(e => e.ph === 's').length; })"
            ".catch(e => { document.body.textContent = 'error ' + e; });"
            "</script></body></html>")
        handler = functools.partial(QuietHandler, directory=str(self.tmp))
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            url = f"http://127.0.0.1:{server.server_address[1]}/page.html"
            p = harness.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                             f"--user-data-dir={self.tmp / 'profile'}",
                             "--virtual-time-budget=20000", "--dump-dom", url], timeout=120)
        finally:
            server.shutdown()
            server.server_close()
        ev = doc["traceEvents"]
        expected = (f"events={len(ev)} X={len([e for e in ev if e['ph'] == 'X'])} "
                    f"flows={len([e for e in ev if e['ph'] == 's'])}")
        self.assertIn(expected, p.stdout)


if __name__ == "__main__":
    harness.main()
