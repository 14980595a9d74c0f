"""`encore export --to dumpi`: ring, halo2d, collectives and master_worker recorded at 2
ranks, exported, and read back with our own reader (dumpi_reader.py, written from sst-dumpi's
reader). Every field of every record is checked against the trace as `encore show` prints it
(doc/dumpi-export.md says where each comes from): function and order, thread, start time
exactly and duration as show rounds it, counts, peers, tags, roots, arrays, statuses, and
handles (a consistent one-to-one numbering per rank, DUMPI's own numbers for predefined ones);
then the footer's call counts, the datatype size table, the header and the .meta file."""
import collections
import json
import pathlib
import re
import shutil
import tempfile
import unittest

import dumpi_reader
import harness

SHOW_LINE = re.compile(
    r"^r(\d+) t(\d+) #(\d+) (MPI_\w+)  (\d+\.\d{6}) ms \+(\S+)(?:  (.*))?$")
ARG = re.compile(r"(\w+)=((?:\[(?:[^\]\[{]|(?:IGNORE)?\{[^}]*\})*\])|(?:IGNORE)?\{[^}]*\}|\S+)")
STATUS = re.compile(r"^(?:IGNORE)?\{src=(\S+) tag=(\S+) (\d+)B( err=-?\d+)?( cancelled)?\}$")

DATATYPES = ["MPI_CHAR", "MPI_SIGNED_CHAR", "MPI_UNSIGNED_CHAR", "MPI_BYTE", "MPI_WCHAR",
             "MPI_SHORT", "MPI_UNSIGNED_SHORT", "MPI_INT", "MPI_UNSIGNED", "MPI_LONG",
             "MPI_UNSIGNED_LONG", "MPI_FLOAT", "MPI_DOUBLE", "MPI_LONG_DOUBLE",
             "MPI_LONG_LONG_INT", "MPI_UNSIGNED_LONG_LONG", "MPI_LONG_LONG", "MPI_PACKED",
             "MPI_LB", "MPI_UB", "MPI_FLOAT_INT", "MPI_DOUBLE_INT", "MPI_LONG_INT",
             "MPI_SHORT_INT", "MPI_2INT", "MPI_LONG_DOUBLE_INT"]
FIXED = {
    "datatype": {"MPI_DATATYPE_NULL": 1, **{n: i + 2 for i, n in enumerate(DATATYPES)}},
    "comm": {"MPI_COMM_NULL": 1, "MPI_COMM_WORLD": 2, "MPI_COMM_SELF": 3},
    "op": {n: i + 1 for i, n in enumerate(
        ["MPI_MAX", "MPI_MIN", "MPI_SUM", "MPI_PROD", "MPI_LAND", "MPI_BAND", "MPI_LOR",
         "MPI_BOR", "MPI_LXOR", "MPI_BXOR", "MPI_MINLOC", "MPI_MAXLOC", "MPI_REPLACE"])},
    "request": {"MPI_REQUEST_NULL": 1},
}
FIXED["op"]["MPI_OP_NULL"] = 14
KIND = {"datatype": "datatype", "sendtype": "datatype", "recvtype": "datatype",
        "comm": "comm", "newcomm": "comm", "op": "op", "request": "request",
        "array_of_requests": "request"}
SIZES = {"MPI_DOUBLE": 8, "MPI_INT": 4, "MPI_CHAR": 1, "MPI_BYTE": 1, "MPI_UNSIGNED_CHAR": 1,
         "MPI_LONG": 8, "MPI_UNSIGNED_LONG": 8, "MPI_FLOAT": 4}
SENTINELS = {"MPI_ANY_SOURCE": -1, "MPI_ANY_TAG": -1, "MPI_ROOT": -2, "MPI_PROC_NULL": None}
ONE_PEER = {"MPI_Send", "MPI_Bsend", "MPI_Ssend", "MPI_Rsend", "MPI_Recv", "MPI_Isend",
            "MPI_Ibsend", "MPI_Issend", "MPI_Irsend", "MPI_Irecv", "MPI_Send_init",
            "MPI_Bsend_init", "MPI_Ssend_init", "MPI_Rsend_init", "MPI_Recv_init"}
MPI_UNDEFINED = -32766  # MPICH's


def tool(*args, check=True):
    return harness.run([harness.TOOL, *map(str, args)], check=check, timeout=300)


def format_duration(ns):
    """libtime's format_duration (event_text.cpp), to compare with what show prints."""
    if ns < 1000:
        return f"{ns}ns"
    if ns < 10**6:
        return f"{ns / 1e3:.{2 if ns < 1e4 else 1 if ns < 1e5 else 0}f}us"
    if ns < 10**9:
        return f"{ns / 1e6:.{2 if ns < 1e7 else 1 if ns < 1e8 else 0}f}ms"
    return f"{ns / 1e9:.3f}s"


def show_calls(trace):
    """{rank: [call]}, call = dict(function, thread, index, start_ns, duration, args)."""
    calls = collections.defaultdict(list)
    for line in tool("show", trace).stdout.splitlines():
        m = SHOW_LINE.match(line)
        if m:
            calls[int(m.group(1))].append({
                "function": m.group(4), "thread": int(m.group(2)), "index": int(m.group(3)),
                "start_ns": int(m.group(5).replace(".", "")), "duration": m.group(6),
                "args": dict(ARG.findall(m.group(7) or ""))})
    return calls


def number(text):
    if text in SENTINELS:
        return SENTINELS[text]
    if text == "MPI_UNDEFINED":
        return MPI_UNDEFINED
    return int(text)


def status_of(text):
    m = STATUS.match(text)
    assert m, text
    return {"source": number(m.group(1)), "tag": number(m.group(2)), "bytes": int(m.group(3)),
            "cancelled": 1 if m.group(5) else 0}


def items(text):
    """Items of a "[a,b,{...},c]" list."""
    inner = text[1:-1]
    return re.findall(r"\{[^}]*\}|[^,]+", inner) if inner else []


def handle_base(text):
    """"comm#1024[0,1]" -> "comm#1024" (members shown after a new communicator)."""
    return text.split("[")[0]


class Handles:
    """Checks that names (as show prints them) and DUMPI numbers correspond one to one."""

    def __init__(self, test):
        self.test = test
        self.forward = collections.defaultdict(dict)
        self.backward = collections.defaultdict(dict)

    def check(self, kind, name, value, where):
        fixed = FIXED[kind].get(name)
        if fixed is not None:
            self.test.assertEqual(value, fixed, f"{where}: {name}")
            return
        self.test.assertNotIn(value, FIXED[kind].values(), f"{where}: {name} took a fixed id")
        self.test.assertEqual(self.forward[kind].setdefault(name, value), value, where)
        self.test.assertEqual(self.backward[kind].setdefault(value, name), name, where)


class ExportDumpi(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        harness.TMP_ROOT.mkdir(parents=True, exist_ok=True)
        cls.root = pathlib.Path(tempfile.mkdtemp(prefix="dumpi-", dir=harness.TMP_ROOT))
        cls.traces = {}
        for name, args in (("ring", ()), ("halo2d", (64, 20)), ("collectives", ()),
                           ("master_worker", (64, 16, 64))):
            trace = cls.root / name
            harness.record(trace, 2, harness.example(name), *args)
            cls.traces[name] = trace

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.root, ignore_errors=True)

    def export(self, name, suffix=""):
        out = self.root / f"{name}{suffix}.dumpi"
        p = tool("export", "--to", "dumpi", self.traces[name], out)
        self.assertRegex(p.stdout, r"^dumpi: \d+ events -> \d+ records in ")
        return out, p.stdout

    def expected_records(self, calls, rank):
        """The calls the export writes, as (call, function written, side) in order; side is
        which half of a Sendrecv with an MPI_PROC_NULL peer is left (None otherwise)."""
        names = {name for name, _ in dumpi_reader.LAYOUTS.values()}
        out = []
        for c in calls:
            f, a = c["function"], c["args"]
            if f not in names or "rc" in a:
                continue
            if f in ONE_PEER:
                peer = a.get("dest", a.get("source"))
                if peer == "MPI_PROC_NULL":
                    continue
            if f in ("MPI_Sendrecv", "MPI_Sendrecv_replace"):
                dest_null, src_null = a["dest"] == "MPI_PROC_NULL", a["source"] == "MPI_PROC_NULL"
                if dest_null and src_null:
                    continue
                if dest_null or src_null:
                    out.append((c, "MPI_Recv" if dest_null else "MPI_Send", f))
                    continue
            out.append((c, f, None))
        return out

    def check_export(self, name):
        out, stdout = self.export(name)
        manifest = json.loads((self.traces[name] / "manifest.json").read_text())
        nprocs = manifest["nprocs"]
        meta = dict(l.split("=", 1) for l in (out / "encore.meta").read_text().splitlines())
        self.assertEqual(meta["numprocs"], str(nprocs))
        self.assertEqual(meta["fileprefix"], "encore")
        self.assertEqual((meta["version"], meta["subversion"], meta["subsubversion"]),
                         ("0", "6", "9"))
        self.assertEqual(int(meta["startime"]), manifest["start_time_unix_ns"] // 10**9)
        ranks = manifest["ranks"]
        shift = max([0] + [-harness.lowest_offset(r) for r in ranks])
        calls = show_calls(self.traces[name])
        total = 0
        for rank in range(nprocs):
            f = dumpi_reader.read_bin(out / f"encore-{rank:04d}.bin")
            self.assertEqual(f["header"]["version"], [0, 6, 9])
            self.assertEqual(f["header"]["hostname"], manifest["ranks"][rank]["host"])
            self.assertEqual(f["header"]["starttime"], manifest["start_time_unix_ns"] // 10**9)
            records = f["records"]
            expected = self.expected_records(calls[rank], rank)
            self.assertEqual([r["name"] for r in records], [w for _, w, _ in expected],
                             f"rank {rank}")
            handles = Handles(self)
            comm_members = {"MPI_COMM_WORLD": list(range(nprocs)), "MPI_COMM_SELF": [rank]}
            # Requests of calls not written (MPI_PROC_NULL peers, no DUMPI record) read as
            # MPI_REQUEST_NULL.
            names = {name for name, _ in dumpi_reader.LAYOUTS.values()}
            dropped = {f"req@#{c['index']}" for c in calls[rank] if "request" in c["args"]
                       and (c["function"] not in names or
                            c["args"].get("dest", c["args"].get("source")) == "MPI_PROC_NULL")}
            for (call, written, replaced), rec in zip(expected, records):
                where = f"rank {rank} #{call['index']} {call['function']}"
                a = call["args"]
                for key in ("newcomm", "comm"):
                    m = re.match(r"^(comm#\d+)\[([\d,?]*)\]$", a.get(key, ""))
                    if m:
                        comm_members[m.group(1)] = [int(x) for x in m.group(2).split(",") if x.isdigit()]
                self.assertEqual(rec["thread"], call["thread"], where)
                self.assertEqual(rec["mask"], 0x4B, where)
                # Times on rank 0's timeline: t + offset(t) (harness.offset_at), so a call's
                # duration there differs from the recorded one by the offset's drift over it.
                start = call["start_ns"]
                self.assertEqual(rec["start_ns"], start + harness.offset_at(ranks[rank], start) + shift,
                                 where)
                end = start + rec["end_ns"] - rec["start_ns"]
                drift = harness.offset_at(ranks[rank], end) - harness.offset_at(ranks[rank], start)
                self.assertEqual(format_duration(rec["end_ns"] - rec["start_ns"] - drift),
                                 call["duration"], where)
                self.assertEqual(rec["perf"], [], where)
                self.check_fields(rec, call, replaced, handles, comm_members, dropped, rank, where)
                total += 1
            calls_by_label = collections.Counter(r["label"] for r in records)
            for label, n in enumerate(f["footer"]["calls"]):
                self.assertEqual(n, calls_by_label.get(label, 0), f"footer label {label}")
            self.assertEqual(set(f["footer"]["ignored"]), {0})
            self.assertEqual(f["perf_labels"], [])
            sizes = f["sizes"]
            for type_name, size in SIZES.items():
                i = FIXED["datatype"][type_name]
                self.assertEqual(sizes[i], size, type_name)
            for type_name, i in handles.forward["datatype"].items():
                self.assertLess(i, len(sizes), type_name)
                self.assertGreater(sizes[i], 0, f"{type_name} has no size")
            self.derived_sizes(calls[rank], handles, sizes)
        self.assertRegex(stdout, rf"-> {total} records")
        return stdout

    def derived_sizes(self, calls, handles, sizes):
        """A vector or contiguous type of a predefined type: count x blocklength x size."""
        for c in calls:
            a = c["args"]
            if c["function"] in ("MPI_Type_vector", "MPI_Type_contiguous"):
                new = handle_base(a["newtype"])
                if new not in handles.forward["datatype"]:
                    continue
                blocks = int(a["count"]) * int(a.get("blocklength", "1"))
                self.assertEqual(sizes[handles.forward["datatype"][new]],
                                 blocks * SIZES[a["oldtype"]], new)

    def check_fields(self, rec, call, replaced, handles, comm_members, dropped, rank, where):
        a = dict(call["args"])
        if replaced:  # a Sendrecv written as its Send or Recv half
            send = rec["name"] == "MPI_Send"
            if replaced == "MPI_Sendrecv":
                a["count"] = a["sendcount" if send else "recvcount"]
                a["datatype"] = a["sendtype" if send else "recvtype"]
            a["tag"] = a["sendtag" if send else "recvtag"]
        skip = {"label", "name", "mask", "thread", "start_ns", "end_ns", "perf"}
        for field, value in rec.items():
            if field in skip:
                continue
            w = f"{where} {field}"
            if field == "commrank":
                members = comm_members[handle_base(a["comm"])]
                self.assertEqual(value, members.index(rank), w)
            elif field == "commsize":
                self.assertEqual(value, len(comm_members[handle_base(a["comm"])]), w)
            elif field == "argv":
                self.assertIsInstance(value, list)
            elif field in ("required", "provided"):
                self.assertEqual(value, number(a[field]), w)
            elif field in KIND and field != "array_of_requests":
                name = handle_base(a[field])
                if KIND[field] == "request" and name in dropped:
                    self.assertEqual(value, 1, w)
                else:
                    handles.check(KIND[field], name, value, w)
            elif field == "array_of_requests":
                names = items(a[field])
                self.assertEqual(len(value), len(names), w)
                for name, v in zip(names, value):
                    if name in dropped:
                        self.assertEqual(v, 1, w)
                    else:
                        handles.check("request", name, v, w)
            elif field in ("status",):
                flag_unset = "flag" in a and a["flag"] == "0"
                if value is None:  # no status: none recorded, or undefined (flag not set)
                    self.assertTrue(field not in a or a[field] == "?" or flag_unset, w)
                    continue
                self.assertFalse(flag_unset, w)
                s = status_of(a[field])
                self.assertEqual((value["bytes"], value["tag"], value["cancelled"]),
                                 (s["bytes"], -1 if s["tag"] is None else s["tag"],
                                  s["cancelled"]), w)
                self.assertEqual(value["source"], -1 if s["source"] is None else s["source"], w)
            elif field == "array_of_statuses":
                texts = items(a.get(field, "[]"))
                self.assertEqual(len(value), len(texts), w)
                for st, text in zip(value, texts):
                    s = status_of(text)
                    self.assertEqual((st["bytes"], st["source"], st["tag"]),
                                     (s["bytes"], s["source"], s["tag"]), w)
            elif isinstance(value, list):
                self.assertEqual(value, [number(x) for x in items(a[field])], w)
            else:
                self.assertIn(field, a, w)
                self.assertEqual(value, number(a[field]), w)

    def test_ring(self):
        stdout = self.check_export("ring")
        # The non-periodic shift's MPI_PROC_NULL edges are said to be left out.
        self.assertIn("MPI_PROC_NULL", stdout)

    def test_halo2d(self):
        self.check_export("halo2d")

    def test_collectives(self):
        stdout = self.check_export("collectives")
        # Nonblocking collectives have no DUMPI record: a note names them with their count.
        self.assertRegex(stdout, r"note: MPI_Iallreduce: \d+ calls not written")

    def test_master_worker(self):
        self.check_export("master_worker")

    def test_damaged_file_is_rejected_by_the_reader(self):
        out, _ = self.export("ring", "-damaged")
        data = bytearray((out / "encore-0000.bin").read_bytes())
        data[16:18] = b"\x01\x00"  # the first record's label (after magic and time offsets)
        bad = self.root / "bad.bin"
        bad.write_bytes(bytes(data))
        with self.assertRaises(ValueError):
            dumpi_reader.read_bin(bad)


if __name__ == "__main__":
    harness.main()
