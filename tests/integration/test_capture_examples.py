"""Every example recorded under MPICH: the trace is complete, each rank's recorded payload bytes
are exactly what the rank received (the example's own digest against `encore digest`), the
program's output is unchanged by recording, and wildcard receives keep their real source."""
import json
import re

import harness

# (example, ranks, ranks whose recv digest is the digest of what they received in order)
CASES = [
    ("ring", 2, None),
    ("ring", 4, None),
    ("halo2d", 2, None),
    ("halo2d", 4, None),
    ("collectives", 2, None),
    ("collectives", 4, None),
    ("master_worker", 2, {1}),     # the master's digest is of the assembled image: its
                                   # `arrival` line has what it received in order
    ("master_worker", 4, {1, 2, 3}),
    ("fortran_ring", 2, None),
    ("hybrid_omp", 2, None),
]


class CaptureExamples(harness.TempDirTest):
    def record_and_compare(self, name, n, digest_ranks):
        plain = harness.mpirun(n, harness.example(name))
        trace = self.tmp / f"{name}-{n}"
        rec = harness.record(trace, n, harness.example(name))
        got = harness.digests(rec.stdout)
        self.assertEqual(sorted(got), list(range(n)), rec.stdout)
        # Recording does not change what the program computes or prints.
        self.assertEqual(got, harness.digests(plain.stdout))

        check = harness.run([harness.TOOL, "check", str(trace)])
        self.assertEqual(len(re.findall(r"^rank \d+: complete", check.stdout, re.M)), n, check.stdout)

        # A rank whose digest line is not in arrival order (master_worker's master) prints
        # `arrival rank=R recv=X`, what it received in arrival order in this run.
        arrival = {int(r): x for r, x in
                   re.findall(r"^arrival rank=(\d+) recv=([0-9a-f]{16})$", rec.stdout, re.M)}
        expected = {r: got[r][0] for r in (digest_ranks if digest_ranks is not None else range(n))}
        expected.update(arrival)
        self.assertEqual(sorted(expected), list(range(n)), f"{name}: a rank's bytes go unchecked")
        for rank, want in expected.items():
            d = harness.run([harness.TOOL, "digest", str(trace), "--rank", str(rank),
                             "--until-last", "MPI_Gather"])
            m = re.search(r"digest rank=(\d+) recv=([0-9a-f]{16})", d.stdout)
            self.assertIsNotNone(m, d.stdout)
            self.assertEqual(m.group(2), want,
                             f"{name} rank {rank}: recorded payload differs from what it received")
        return trace

    def test_examples(self):
        for name, n, digest_ranks in CASES:
            with self.subTest(example=name, ranks=n):
                self.record_and_compare(name, n, digest_ranks)

    def test_any_source_statuses_are_recorded(self):
        trace = self.record_and_compare("master_worker", 2, {1})
        show = harness.run([harness.TOOL, "show", str(trace), "--rank", "0"]).stdout
        wildcard = [l for l in show.splitlines()
                    if " MPI_Recv " in l and "MPI_ANY_SOURCE" in l and "MPI_ANY_TAG" in l]
        self.assertTrue(wildcard, "no wildcard receive on the master:\n" + show[:2000])
        # Each wildcard receive's status names the worker that really sent it (rank 1).
        for line in wildcard:
            self.assertRegex(line, r"status=\{src=1 tag=\d+")

    def test_large_receives_record_their_first_read(self):
        # Format 1.3: a call that received 64 KiB or more of contiguous bytes records the first
        # read of them apart, a part of its duration; smaller receives and sends never do.
        # (65536 int64 elements: 512 KiB messages, Reduce's root among them.)
        trace = self.tmp / "collectives-first-read"
        harness.record(trace, 2, harness.example("collectives"), "65536")
        unit = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}
        seen = 0
        for rank in (0, 1):
            show = harness.run([harness.TOOL, "show", str(trace), "--rank", str(rank)]).stdout
            for line in show.splitlines():
                m = re.search(r" \+([0-9.]+)(ns|us|ms|s) ", line)
                fr = re.search(r" first_read=([0-9.]+)(ns|us|ms|s)\b", line)
                r = re.search(r" recv (\S+)", line)  # recv 100B, recv [0]100B+[1]200B
                got = max(int(b) for b in re.findall(r"(\d+)B", r.group(1))) if r else 0
                if fr is None:
                    continue
                seen += 1
                self.assertGreaterEqual(got, 65536, line)
                self.assertIsNotNone(m, line)
                first = float(fr.group(1)) * unit[fr.group(2)]
                duration = float(m.group(1)) * unit[m.group(2)]
                # (Both printed to 3 significant digits.)
                self.assertLessEqual(first, duration * 1.01 + 1, line)
        self.assertGreater(seen, 0, "no call recorded a first read")
        # `encore stats` counts the same calls.
        stats = json.loads(harness.run([harness.TOOL, "stats", "--json", str(trace)]).stdout)
        self.assertEqual(stats["total"]["first_reads"], seen)
        self.assertGreater(stats["total"]["first_read_ns"], 0)
        self.assertLessEqual(stats["total"]["first_read_ns"], stats["total"]["mpi_ns"])

    def test_payload_converted_to_the_other_byte_order_at_write(self):
        # Recorded big-endian on this little-endian host: stored bytes differ from what the
        # program received, and converting them back with the recorded element signatures
        # (derived column types included) gives exactly the program's digest.
        trace = self.tmp / "halo-big"
        rec = harness.record(trace, 2, harness.example("halo2d"), options=["--payload-order", "big"])
        got = harness.digests(rec.stdout)
        with open(trace / "rank-00000.payload", "rb") as f:
            self.assertEqual(f.read(14)[13], 2, "payload stream header should say big-endian")
        for rank in (0, 1):
            args = [harness.TOOL, "digest", str(trace), "--rank", str(rank), "--until-last", "MPI_Gather"]
            converted = re.search(r"recv=([0-9a-f]{16})", harness.run(args).stdout).group(1)
            stored = re.search(r"recv=([0-9a-f]{16})", harness.run(args + ["--as-stored"]).stdout).group(1)
            self.assertEqual(converted, got[rank][0])
            self.assertNotEqual(stored, got[rank][0])

    def test_call_sites_resolve_to_source_lines(self):
        trace = self.tmp / "ring-sites"
        harness.record(trace, 2, harness.example("ring"), options=["--callsites"])
        self.assertTrue((trace / "rank-00000.callsites.json").exists())
        stats = json.loads(harness.run([harness.TOOL, "stats", str(trace), "--json"]).stdout)
        sites = [s.get("site", "") for s in stats["ranks"][0]["callsites"]]
        self.assertTrue(any(re.match(r"main \(ring\.c:\d+\)", s) for s in sites), sites)

    def test_papi_counters_or_one_clear_warning(self):
        trace = self.tmp / "ring-papi"
        rec = harness.record(trace, 2, harness.example("ring"),
                             options=["--papi-events", "PAPI_TOT_INS,PAPI_TOT_CYC"])
        manifest = json.loads((trace / "manifest.json").read_text())
        papi = manifest["papi"]
        self.assertEqual(papi["requested"], ["PAPI_TOT_INS", "PAPI_TOT_CYC"])
        warnings = [l for l in rec.stderr.splitlines() if "PAPI counters unavailable" in l]
        if papi["available"]:
            self.assertEqual(warnings, [])
            show = harness.run([harness.TOOL, "show", str(trace), "--rank", "0"]).stdout
            self.assertIn("counters", show)
        else:
            # This machine has no usable counters (common in VMs): one line, naming PAPI's
            # reason, and the capture still completes.
            self.assertEqual(len(warnings), 1, rec.stderr)
            self.assertTrue(papi["reason"])
            self.assertIn(papi["reason"], warnings[0])
            harness.run([harness.TOOL, "check", str(trace)])

    def test_stats_counts_match_the_program(self):
        # ring at 2 ranks, 3 laps: rank 0 starts 3 token sends and 3 token receives.
        trace = self.tmp / "ring-stats"
        harness.record(trace, 2, harness.example("ring"))
        stats = json.loads(harness.run([harness.TOOL, "stats", str(trace), "--json"]).stdout)
        text = json.dumps(stats)
        self.assertIn("MPI_Sendrecv", text)
        self.assertIn("MPI_Bsend", text)


if __name__ == "__main__":
    harness.main()
