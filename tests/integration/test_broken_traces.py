"""`encore check` and `encore show` on damaged traces: a corpus made from one real 2-rank
recording (flipped bits, cut files, wrong versions, missing files, bad manifests). Every case
ends with a non-zero exit and one line on stderr naming the file (and the chunk and offset
where it applies), never a crash or a hang; a cut trace still shows what comes before the cut.
Also a small fuzz: bit flips inside raw events chunks with the checksum recomputed, so the
event decoder itself meets the garbage. And the other commands (export, predict, digest) on
damage only the event decoder sees: they say where it is and exit as the user guide says."""
import json
import os
import pathlib
import random
import re
import shutil
import struct
import tempfile
import unittest

import harness

TIMEOUT = 60
CHUNK_HEADER = 64
FILE_HEADER = 32
M64 = (1 << 64) - 1


def xxh64(data, seed=0):
    """XXH64, as the trace format uses it for chunk checksums (standard library only)."""
    p1, p2, p3, p4, p5 = (0x9E3779B185EBCA87, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9,
                          0x85EBCA77C2B2AE63, 0x27D4EB2F165667C5)

    def rotl(x, r):
        return ((x << r) | (x >> (64 - r))) & M64

    def rnd(acc, val):
        acc = (acc + val * p2) & M64
        return (rotl(acc, 31) * p1) & M64

    def merge(acc, val):
        acc ^= rnd(0, val)
        return (acc * p1 + p4) & M64

    n = len(data)
    i = 0
    if n >= 32:
        v = [(seed + p1 + p2) & M64, (seed + p2) & M64, seed, (seed - p1) & M64]
        while i + 32 <= n:
            for k in range(4):
                v[k] = rnd(v[k], struct.unpack_from("<Q", data, i + 8 * k)[0])
            i += 32
        h = (rotl(v[0], 1) + rotl(v[1], 7) + rotl(v[2], 12) + rotl(v[3], 18)) & M64
        for k in range(4):
            h = merge(h, v[k])
    else:
        h = (seed + p5) & M64
    h = (h + n) & M64
    while i + 8 <= n:
        h ^= rnd(0, struct.unpack_from("<Q", data, i)[0])
        h = (rotl(h, 27) * p1 + p4) & M64
        i += 8
    if i + 4 <= n:
        h ^= (struct.unpack_from("<I", data, i)[0] * p1) & M64
        h = (rotl(h, 23) * p2 + p3) & M64
        i += 4
    while i < n:
        h ^= (data[i] * p5) & M64
        h = (rotl(h, 11) * p1) & M64
        i += 1
    h ^= h >> 33
    h = (h * p2) & M64
    h ^= h >> 29
    h = (h * p3) & M64
    h ^= h >> 32
    return h


def chunks(path):
    """[(offset, kind, codec, thread, stored_size, count)] of a stream file."""
    data = pathlib.Path(path).read_bytes()
    out = []
    off = FILE_HEADER
    while off + CHUNK_HEADER <= len(data):
        assert data[off:off + 4] == b"ECHK", f"{path}: no chunk at {off}"
        kind, codec, thread = data[off + 4], data[off + 5], struct.unpack_from("<H", data, off + 6)[0]
        stored = struct.unpack_from("<I", data, off + 16)[0]
        count = struct.unpack_from("<I", data, off + 40)[0]
        out.append((off, kind, codec, thread, stored, count))
        off += CHUNK_HEADER + stored
    return out


def flip(path, offset, bit=0x10):
    data = bytearray(pathlib.Path(path).read_bytes())
    data[offset] ^= bit
    pathlib.Path(path).write_bytes(bytes(data))


def fix_checksum(path, chunk_offset):
    data = bytearray(pathlib.Path(path).read_bytes())
    stored = struct.unpack_from("<I", data, chunk_offset + 16)[0]
    body = data[chunk_offset:chunk_offset + 56] + data[chunk_offset + CHUNK_HEADER:
                                                       chunk_offset + CHUNK_HEADER + stored]
    struct.pack_into("<Q", data, chunk_offset + 56, xxh64(bytes(body)))
    pathlib.Path(path).write_bytes(bytes(data))


def set_u32(path, offset, value):
    data = bytearray(pathlib.Path(path).read_bytes())
    struct.pack_into("<I", data, offset, value)
    pathlib.Path(path).write_bytes(bytes(data))


def fill_body_tail(path, chunk, byte=0xFF):
    """Overwrites the second half of a raw chunk's body (continuation bytes everywhere: no
    varint ends) and recomputes its checksum, so that only the event decoder sees it."""
    off, stored = chunk[0], chunk[4]
    data = bytearray(pathlib.Path(path).read_bytes())
    begin, end = off + CHUNK_HEADER + stored // 2, off + CHUNK_HEADER + stored
    data[begin:end] = bytes([byte]) * (end - begin)
    pathlib.Path(path).write_bytes(bytes(data))
    fix_checksum(path, off)


def edit_manifest(trace, change):
    p = trace / "manifest.json"
    doc = json.loads(p.read_text())
    change(doc)
    p.write_text(json.dumps(doc))


class BrokenTraces(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        harness.TMP_ROOT.mkdir(parents=True, exist_ok=True)
        cls.root = pathlib.Path(tempfile.mkdtemp(prefix="broken-", dir=harness.TMP_ROOT))
        # A short flush interval and enough laps for several events chunks per rank. How many
        # laps that takes depends on the machine's speed (a flush every 10 ms), so the run is
        # lengthened until every rank has at least 3.
        cls.base = cls.root / "base"
        for laps in (2000, 20000, 200000):
            shutil.rmtree(cls.base, ignore_errors=True)
            harness.record(cls.base, 2, harness.example("ring"), laps, 100,
                           options=("--flush-ms", "10", "--quiet"))
            if all(len([c for c in chunks(cls.base / f"rank-0000{r}.events") if c[1] == 1]) >= 3
                   for r in (0, 1)):
                break
        # The same with raw (uncompressed) chunks, for the fuzz test.
        cls.raw = cls.root / "raw"
        harness.record(cls.raw, 2, harness.example("ring"), 20, 10,
                       options=("--zstd-level", "0", "--quiet"))
        # With call sites, for the damaged call-site tables.
        cls.sites = cls.root / "sites"
        harness.record(cls.sites, 2, harness.example("ring"), 20, 10,
                       options=("--callsites", "--quiet"))
        for t in (cls.base, cls.raw, cls.sites):
            check = harness.run([harness.TOOL, "check", str(t)], timeout=TIMEOUT)
            assert check.stdout.count(": complete (") == 2, check.stdout

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.root, ignore_errors=True)

    def copy(self, name, source=None):
        dst = self.root / name
        shutil.rmtree(dst, ignore_errors=True)
        shutil.copytree(source or self.base, dst)
        return dst

    def run_tool(self, *args):
        p = harness.run([harness.TOOL, *map(str, args)], check=False, timeout=TIMEOUT)
        self.assert_no_crash(p, args)
        return p

    def assert_no_crash(self, p, args):
        what = f"encore {' '.join(map(str, args))}: rc={p.returncode}\n{p.stderr[-2000:]}"
        self.assertGreaterEqual(p.returncode, 0, what)
        self.assertNotIn(p.returncode, (134, 136, 139), what)
        for bad in ("terminate called", "Segmentation", "Aborted", "AddressSanitizer"):
            self.assertNotIn(bad, p.stderr, what)

    def assert_fails(self, trace, file, code=None, where=(), commands=(("check",), ("show",))):
        """Each command exits non-zero (or with `code`) with one stderr line naming `file`."""
        for cmd in commands:
            p = self.run_tool(cmd[0], trace, *cmd[1:])
            what = f"encore {' '.join(cmd)} {trace.name}: rc={p.returncode}\nstdout:\n" \
                   f"{p.stdout[-1500:]}\nstderr:\n{p.stderr}"
            self.assertNotEqual(p.returncode, 0, what)
            if code is not None:
                self.assertEqual(p.returncode, code, what)
            lines = p.stderr.splitlines()
            self.assertEqual(len(lines), 1, what)
            self.assertTrue(lines[0].startswith("encore: "), what)
            self.assertIn(file, lines[0], what)
            for w in where:
                self.assertIn(w, lines[0], what)
        return p

    def show_lines(self, trace, rank):
        p = self.run_tool("show", trace, "--rank", rank)
        return p, [l for l in p.stdout.splitlines() if l.startswith(f"r{rank} ")]

    # --- damage inside stream files -----------------------------------------------------

    def test_bit_flip_in_events_chunk_body(self):
        t = self.copy("body-flip")
        ev = t / "rank-00000.events"
        cs = [c for c in chunks(ev) if c[1] == 1]
        self.assertGreaterEqual(len(cs), 3, "the base trace needs several events chunks")
        off = cs[1][0]
        flip(ev, off + CHUNK_HEADER + cs[1][4] // 2)
        self.assert_fails(t, "rank-00000.events", 1, where=(f"offset {off}", "checksum"))
        check = self.run_tool("check", t)
        self.assertRegex(check.stdout, rf"rank 0: corrupt at event {cs[0][5]} \(chunk 1, offset {off}\)")
        self.assertRegex(check.stdout, r"rank 1: complete \(")
        # show: everything before the damaged chunk.
        p, lines = self.show_lines(t, 0)
        self.assertEqual(p.returncode, 1)
        self.assertEqual(len(lines), cs[0][5])

    def test_bit_flip_in_chunk_header(self):
        t = self.copy("header-flip")
        ev = t / "rank-00001.events"
        cs = [c for c in chunks(ev) if c[1] == 1]
        off = cs[2][0]
        flip(ev, off + 40, 0x01)  # the count field: caught by the checksum
        self.assert_fails(t, "rank-00001.events", 1, where=("chunk 2", f"offset {off}"))
        check = self.run_tool("check", t)
        self.assertRegex(check.stdout, rf"rank 1: corrupt at event {cs[0][5] + cs[1][5]} "
                                       rf"\(chunk 2, offset {off}\)")

    def test_bad_chunk_magic(self):
        t = self.copy("magic")
        ev = t / "rank-00000.events"
        off = chunks(ev)[1][0]
        flip(ev, off, 0x20)
        self.assert_fails(t, "rank-00000.events", 1, where=("chunk 1", f"offset {off}", "magic"))

    def test_truncated_mid_chunk_shows_events_before_the_cut(self):
        t = self.copy("cut")
        ev = t / "rank-00001.events"
        cs = [c for c in chunks(ev) if c[1] == 1]
        off = cs[2][0]
        with open(ev, "r+b") as f:
            f.truncate(off + CHUNK_HEADER + cs[2][4] // 2)
        self.assert_fails(t, "rank-00001.events", 1, where=("chunk 2", f"offset {off}"))
        before = cs[0][5] + cs[1][5]
        check = self.run_tool("check", t)
        self.assertIn(f"rank 1: truncated at event {before} (chunk 2, offset {off})", check.stdout)
        p, lines = self.show_lines(t, 1)
        self.assertEqual(p.returncode, 1)
        self.assertEqual(len(lines), before)
        self.assertTrue(lines[0].startswith("r1 t0 #0 MPI_Init"), lines[0])
        self.assertIn("file ends inside the chunk body", p.stderr)
        # stats and digest report the cut too.
        self.assertEqual(self.run_tool("stats", t).returncode, 1)
        self.assertEqual(self.run_tool("digest", t, "--rank", 1).returncode, 1)

    def test_cut_at_a_chunk_boundary_is_incomplete(self):
        t = self.copy("boundary")
        ev = t / "rank-00000.events"
        off = [c for c in chunks(ev) if c[1] == 1][2][0]
        with open(ev, "r+b") as f:
            f.truncate(off)
        self.assert_fails(t, "rank-00000.events", 1)
        check = self.run_tool("check", t)
        self.assertRegex(check.stdout, r"rank 0: incomplete at event \d+ \(chunk 2, offset "
                                       rf"{off}\): .*without its trailer")

    def test_truncated_payload(self):
        t = self.copy("payload-cut")
        pl = t / "rank-00000.payload"
        cs = [c for c in chunks(pl) if c[1] == 2]
        off = cs[-1][0]
        with open(pl, "r+b") as f:
            f.truncate(off + CHUNK_HEADER + 5)
        self.assert_fails(t, "rank-00000.payload", 1, where=(f"offset {off}",),
                          commands=(("check",), ("show", "--payload"), ("digest",)))
        check = self.run_tool("check", t)
        self.assertRegex(check.stdout, rf"rank 0: payload truncated \(chunk \d+, offset {off}\)")

    def test_wrong_major_version_in_stream_header(self):
        for name in ("rank-00000.events", "rank-00001.payload"):
            with self.subTest(file=name):
                t = self.copy("major-" + name)
                with open(t / name, "r+b") as f:
                    f.seek(8)
                    f.write(struct.pack("<HH", 2, 0))  # major 2, minor 0
                p = self.assert_fails(t, name, 3)
                self.assertIn("format version 2.0", p.stderr)

    def test_empty_rank_file(self):
        t = self.copy("empty-events")
        (t / "rank-00001.events").write_bytes(b"")
        self.assert_fails(t, "rank-00001.events", 3)

    def test_missing_rank_file(self):
        t = self.copy("missing")
        (t / "rank-00001.payload").unlink()
        p = self.assert_fails(t, "rank-00001.payload", 3)
        self.assertIn("missing", p.stderr)

    def test_swapped_rank_files(self):
        # Each file's header names the other rank: refused, not read as the rank it is named for.
        t = self.copy("swapped")
        for kind in ("events", "payload"):
            a, b, tmp = t / f"rank-00000.{kind}", t / f"rank-00001.{kind}", t / "swap"
            a.rename(tmp)
            b.rename(a)
            tmp.rename(b)
        self.assert_fails(t, "rank-00000.events", 3, where=("header says rank 1, expected rank 0",),
                          commands=(("show",), ("stats",), ("digest",), ("pack",)))
        # check goes on to every rank: one line each.
        p = self.run_tool("check", t)
        self.assertEqual(p.returncode, 3, p.stderr)
        self.assertEqual(p.stderr.splitlines(), [
            f"encore: {t}/rank-00000.events: header says rank 1, expected rank 0",
            f"encore: {t}/rank-00001.events: header says rank 0, expected rank 1"])

    def test_check_says_chunk_and_offsets_once(self):
        # A chunk count one short: the decoder finds bytes after the last event. One too many:
        # it reads past the chunk's end, a message with an offset of its own (within the event).
        for delta, said in ((-1, "bytes after its last event"), (1, "event ")):
            with self.subTest(delta=delta):
                t = self.copy(f"count{delta}")
                ev = t / "rank-00000.events"
                index, c = [(i, c) for i, c in enumerate(chunks(ev)) if c[1] == 1][1]
                set_u32(ev, c[0] + 40, c[5] + delta)
                fix_checksum(ev, c[0])
                p = self.assert_fails(t, "rank-00000.events", 1, where=(said,),
                                      commands=(("check",),))
                line = p.stderr.strip()
                self.assertEqual(line.count(f"chunk {index}"), 1, line)
                self.assertEqual(line.count(f"offset {c[0]}"), 1, line)
                self.assertNotRegex(line, r"at offset \d+ at offset")
                check = self.run_tool("check", t)
                self.assertEqual(check.stdout.count(f"chunk {index}"), 1, check.stdout)

    # --- other commands on damage the chunk walk cannot see -----------------------------

    def test_export_of_damaged_events_exits_1(self):
        t = self.copy("export-body", self.raw)
        ev = t / "rank-00001.events"
        fill_body_tail(ev, [c for c in chunks(ev) if c[1] == 1 and c[2] == 0 and c[4] > 0][0])
        self.assertRegex(self.run_tool("check", t).stdout, r"rank 1: corrupt at event")
        for fmt, name in (("chrome", "x.json"), ("simgrid", "sg"), ("otf2", "otf2"),
                          ("dumpi", "dumpi")):
            with self.subTest(format=fmt):
                out = self.root / f"export-body-{fmt}"
                shutil.rmtree(out, ignore_errors=True)
                out.mkdir()
                p = self.run_tool("export", "--to", fmt, t, out / name)
                what = f"rc={p.returncode}\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}"
                self.assertEqual(p.returncode, 1, what)
                self.assertIn(" events -> ", p.stdout, what)  # what could be read is written
                lines = p.stderr.splitlines()
                self.assertEqual(len(lines), 1, what)
                self.assertRegex(lines[0], r"^encore: .*rank-00001\.events: chunk \d+.*; "
                                           r"exported up to there", what)

    def profile(self):
        """A replay profile of rank 0 of the raw trace (made once)."""
        prof = self.root / "raw-prof0"
        if not prof.exists():
            harness.run([harness.TOOL, "replay", "--rank", "0", "-o", str(prof), str(self.raw),
                         "--", harness.example("ring"), "20", "10"], timeout=120)
        return prof

    def test_predict_with_a_damaged_profile(self):
        # Damage in the profile's trailer (after its last call) or in its first events chunk:
        # exit 3 with the reader's own line, not "ends at event #0 before the capture does".
        for case in ("trailer", "events"):
            with self.subTest(case=case):
                prof = self.copy(f"prof-{case}", self.profile())
                ev = prof / "rank-00000.events"
                cs = chunks(ev)
                if case == "trailer":
                    index, c = len(cs) - 1, cs[-1]
                    self.assertEqual(c[1], 3, "the profile should end with its trailer")
                    set_u32(ev, c[0] + 20, 0x7FFFFFFF)  # its raw size
                    fix_checksum(ev, c[0])
                    said = "raw size exceeds"
                else:
                    index, c = [(i, c) for i, c in enumerate(cs) if c[1] == 1][0]
                    with open(ev, "r+b") as f:
                        f.truncate(c[0] + CHUNK_HEADER + c[4] // 2)
                    said = "file ends inside the chunk body"
                p = self.run_tool("predict", self.raw, "--replay", prof)
                what = f"rc={p.returncode}\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}"
                self.assertEqual(p.returncode, 3, what)
                lines = p.stderr.splitlines()
                self.assertEqual(len(lines), 1, what)
                self.assertIn(f"prof-{case}/rank-00000.events: chunk {index}", lines[0], what)
                self.assertIn(said, lines[0], what)
        # The profile as it was is still accepted.
        self.assertEqual(self.run_tool("predict", self.raw, "--replay", self.profile()).returncode,
                         0)

    def test_digest_names_where_a_signature_cannot_swap(self):
        # Payloads stored big-endian are swapped back with the datatype's element signature; a
        # run of 3-byte elements cannot be, and the line says which file, rank, event, datatype.
        t = self.root / "big-endian"
        if not t.exists():
            harness.record(t, 2, harness.example("ring"), 20, 10,
                           options=("--zstd-level", "0", "--payload-order", "big", "--quiet"))
        ev = t / "rank-00000.events"
        data = bytearray(ev.read_bytes())
        # The first signature of MPI_UINT64_T (the token): tag 3, datatype, size 8, one run of
        # 1 element of 8 bytes. Its element size becomes 3.
        m = re.compile(rb"\x03(.)\x08\x01\x08\x01", re.S).search(data)
        self.assertIsNotNone(m, "no 8-byte signature in rank 0's events")
        c = [c for c in chunks(ev) if c[0] + CHUNK_HEADER <= m.start() < c[0] + CHUNK_HEADER + c[4]][0]
        self.assertEqual(c[2], 0, "expected a raw chunk")
        data[m.start() + 4] = 3
        ev.write_bytes(bytes(data))
        fix_checksum(ev, c[0])
        p = self.assert_fails(t, "rank-00000.payload", 1, commands=(("digest",),))
        self.assertRegex(p.stderr, rf"rank-00000\.payload: rank 0 event \d+: datatype #{m.group(1)[0]}: "
                                   r"byte swap: unsupported element size 3")

    # --- damage in the manifest ---------------------------------------------------------

    def test_wrong_manifest_format_version(self):
        t = self.copy("manifest-version")
        edit_manifest(t, lambda d: d["format_version"].update(major=7))
        p = self.assert_fails(t, "manifest.json", 3)
        self.assertIn("format version 7", p.stderr)

    def test_manifest_nprocs_mismatch(self):
        t = self.copy("nprocs")
        edit_manifest(t, lambda d: d.update(nprocs=3))
        p = self.assert_fails(t, "manifest.json", 3)
        self.assertIn("nprocs", p.stderr)

    def test_manifest_lists_a_rank_without_files(self):
        t = self.copy("extra-rank")

        def add_rank(d):
            extra = dict(d["ranks"][1])
            extra["rank"] = 2
            d["ranks"].append(extra)
            d["nprocs"] = 3
        edit_manifest(t, add_rank)
        self.assert_fails(t, "rank-00002.events", 3)

    def test_garbage_manifest(self):
        t = self.copy("garbage")
        (t / "manifest.json").write_text("{ this is not json ]\n\x00\x01")
        self.assert_fails(t, "manifest.json", 3)

    def test_empty_manifest(self):
        t = self.copy("empty-manifest")
        (t / "manifest.json").write_bytes(b"")
        self.assert_fails(t, "manifest.json", 3)

    def test_not_a_trace(self):
        empty = self.root / "not-a-trace"
        empty.mkdir(exist_ok=True)
        self.assert_fails(empty, "manifest.json", 3)
        self.assert_fails(self.root / "does-not-exist", "does-not-exist", 3)

    def test_deeply_nested_manifest(self):
        # An unknown key may hold anything, but a million nested arrays overflowed the stack of
        # every tool (nlohmann copies recursively).
        t = self.copy("deep-manifest")
        text = (t / "manifest.json").read_text().rstrip()
        assert text.endswith("}")
        (t / "manifest.json").write_text(
            text[:-1] + ', "extra": ' + "[" * 1_000_000 + "]" * 1_000_000 + "}")
        self.assert_fails(t, "manifest.json", 3, where=("nesting deeper than 64 at offset",),
                          commands=(("check",), ("show",), ("stats",)))

    def test_manifest_is_a_fifo(self):
        t = self.copy("fifo-manifest")
        (t / "manifest.json").unlink()
        os.mkfifo(t / "manifest.json")
        self.assert_fails(t, "manifest.json", 3, where=("not a regular file",))

    def test_profile_of_another_recording_with_a_trace_that_is_not_a_string(self):
        # replay_of.trace only names the recording in the message; a number there gave a raw
        # nlohmann type_error.
        prof = self.copy("profile-trace-number", self.raw)
        start = json.loads((self.raw / "manifest.json").read_text())["start_time_unix_ns"]

        def as_profile(doc):
            doc["kind"] = "replay"
            doc["ranks"] = doc["ranks"][:1]
            doc["replay_of"] = {"trace": 5, "rank": 0, "recording_start_ns": start + 10**9}
        edit_manifest(prof, as_profile)
        self.assert_fails(self.raw, "manifest.json", 3,
                          where=(str(prof), "replays the recording started at"),
                          commands=(("predict", "--replay", str(prof)),))

    # --- damaged call-site tables: they only cost the names ------------------------------

    def assert_stats_names_by_id(self, t, warning=()):
        """`encore stats` succeeds; with `warning`, one stderr line names the table and says
        that (and nothing when the table only has paths it cannot use)."""
        p = harness.run([harness.TOOL, "stats", str(t)], check=False, timeout=30)
        self.assert_no_crash(p, ("stats", t))
        what = f"rc={p.returncode}\nstderr:\n{p.stderr}"
        self.assertEqual(p.returncode, 0, what)
        lines = p.stderr.splitlines()
        if not warning:
            self.assertEqual(lines, [], what)
            return p
        self.assertEqual(len(lines), 1, what)
        self.assertTrue(lines[0].startswith("encore: warning: "), what)
        for w in ("rank-00000.callsites.json", *warning):
            self.assertIn(w, lines[0], what)
        return p

    def test_deeply_nested_callsites(self):
        t = self.copy("deep-callsites", self.sites)
        (t / "rank-00000.callsites.json").write_text(
            '{"callsites": ' + "[" * 1_000_000 + "]" * 1_000_000 + "}")
        self.assert_stats_names_by_id(t, ("nesting deeper than 64 at offset 77",))

    def test_callsites_of_the_wrong_types(self):
        t = self.copy("typed-callsites", self.sites)
        p = t / "rank-00000.callsites.json"
        doc = json.loads(p.read_text())
        sites = doc["callsites"]
        self.assertGreaterEqual(len(sites), 3)
        sites[0]["id"] = str(sites[0]["id"])
        sites[1]["frames"][0]["module"] = 7
        sites[2]["frames"][0]["function"] = ["f"]
        p.write_text(json.dumps(doc))
        self.assert_stats_names_by_id(t, ("3 of", "callsites[0].id"))
        p.write_text('{"callsites": 5}')
        self.assert_stats_names_by_id(t, ('"callsites": expected an array',))

    def test_callsite_module_is_a_fifo(self):
        # Module paths come from the trace: a FIFO blocked stats forever in open().
        t = self.copy("fifo-callsites", self.sites)
        os.mkfifo(t / "fifo")
        p = t / "rank-00000.callsites.json"
        doc = json.loads(p.read_text())
        for site in doc["callsites"]:
            for f in site["frames"]:
                f["module"] = str(t / "fifo")
        p.write_text(json.dumps(doc))
        self.assert_stats_names_by_id(t)

    # --- the decoder meets garbage ------------------------------------------------------

    def test_fuzz_events_with_valid_checksums(self):
        rng = random.Random(1234)
        for i in range(40):
            t = self.copy("fuzz", self.raw)
            rank = i % 2
            ev = t / f"rank-0000{rank}.events"
            cs = [c for c in chunks(ev) if c[1] == 1 and c[2] == 0 and c[4] > 0]
            self.assertTrue(cs, "expected raw events chunks")
            c = rng.choice(cs)
            for _ in range(rng.choice((1, 1, 2, 8))):
                flip(ev, c[0] + CHUNK_HEADER + rng.randrange(c[4]), 1 << rng.randrange(8))
            fix_checksum(ev, c[0])
            untouched = (self.raw / ev.name).read_bytes()
            self.assertEqual(untouched[cs[0][0] + 56:cs[0][0] + 64],
                             struct.pack("<Q", xxh64(untouched[cs[0][0]:cs[0][0] + 56] +
                                                     untouched[cs[0][0] + CHUNK_HEADER:
                                                               cs[0][0] + CHUNK_HEADER + cs[0][4]])),
                             "xxh64 in this test disagrees with the trace writer")
            for cmd in (("check",), ("show", "--payload"), ("stats", "--json"), ("digest",)):
                p = self.run_tool(cmd[0], t, *cmd[1:])
                self.assertIn(p.returncode, (0, 1), f"{cmd}: {p.stderr}")
                self.assertNotIn("checksum mismatch", p.stderr)
                if p.returncode != 0:
                    lines = p.stderr.splitlines()
                    self.assertTrue(lines and all(l.startswith("encore: ") for l in lines),
                                    f"{cmd}: {p.stderr}")


if __name__ == "__main__":
    harness.main()
