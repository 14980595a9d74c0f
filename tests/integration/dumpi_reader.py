"""Our own reader of SST-DUMPI .bin files (the layout of doc/dumpi-export.md, written from
sst-dumpi's reader): used by test_export_dumpi.py to check an export field by field. Standard
library only; every read is bounds-checked, so a malformed file raises ValueError."""
import struct

HEAD_MAGIC = 0xFFAADD44554D5049
FOOT_MAGIC = 0xF007FEE7
ALL_FUNCTIONS = 290
END_OF_STREAM = 293

# Field layouts after the common record part, by label. Types: i32, u32, u16 (handles),
# u8 (op, thread level), arr (u32 n + n i32), status, statuses, argv. A field named
# "name?root" is present only when commrank == root.
LAYOUTS = {
    0: ("MPI_Send", "count:i32 datatype:u16 dest:i32 tag:i32 comm:u16"),
    1: ("MPI_Recv", "count:i32 datatype:u16 source:i32 tag:i32 comm:u16 status:status"),
    3: ("MPI_Bsend", "count:i32 datatype:u16 dest:i32 tag:i32 comm:u16"),
    4: ("MPI_Ssend", "count:i32 datatype:u16 dest:i32 tag:i32 comm:u16"),
    5: ("MPI_Rsend", "count:i32 datatype:u16 dest:i32 tag:i32 comm:u16"),
    8: ("MPI_Isend", "count:i32 datatype:u16 dest:i32 tag:i32 comm:u16 request:i32"),
    9: ("MPI_Ibsend", "count:i32 datatype:u16 dest:i32 tag:i32 comm:u16 request:i32"),
    10: ("MPI_Issend", "count:i32 datatype:u16 dest:i32 tag:i32 comm:u16 request:i32"),
    11: ("MPI_Irsend", "count:i32 datatype:u16 dest:i32 tag:i32 comm:u16 request:i32"),
    12: ("MPI_Irecv", "count:i32 datatype:u16 source:i32 tag:i32 comm:u16 request:i32"),
    13: ("MPI_Wait", "request:i32 status:status"),
    14: ("MPI_Test", "request:i32 flag:i32 status:status"),
    15: ("MPI_Request_free", "request:i32"),
    16: ("MPI_Waitany", "count:i32 array_of_requests:arr indx:i32 status:status"),
    17: ("MPI_Testany", "count:i32 array_of_requests:arr indx:i32 flag:i32 status:status"),
    18: ("MPI_Waitall", "count:i32 array_of_requests:arr array_of_statuses:statuses"),
    19: ("MPI_Testall", "count:i32 array_of_requests:arr flag:i32 array_of_statuses:statuses"),
    20: ("MPI_Waitsome", "incount:i32 array_of_requests:arr outcount:i32 array_of_indices:arr "
                         "array_of_statuses:statuses"),
    21: ("MPI_Testsome", "incount:i32 array_of_requests:arr outcount:i32 array_of_indices:arr "
                         "array_of_statuses:statuses"),
    22: ("MPI_Iprobe", "source:i32 tag:i32 comm:u16 flag:i32 status:status"),
    23: ("MPI_Probe", "source:i32 tag:i32 comm:u16 status:status"),
    24: ("MPI_Cancel", "request:i32"),
    26: ("MPI_Send_init", "count:i32 datatype:u16 dest:i32 tag:i32 comm:u16 request:i32"),
    27: ("MPI_Bsend_init", "count:i32 datatype:u16 dest:i32 tag:i32 comm:u16 request:i32"),
    28: ("MPI_Ssend_init", "count:i32 datatype:u16 dest:i32 tag:i32 comm:u16 request:i32"),
    29: ("MPI_Rsend_init", "count:i32 datatype:u16 dest:i32 tag:i32 comm:u16 request:i32"),
    30: ("MPI_Recv_init", "count:i32 datatype:u16 source:i32 tag:i32 comm:u16 request:i32"),
    31: ("MPI_Start", "request:i32"),
    32: ("MPI_Startall", "count:i32 array_of_requests:arr"),
    33: ("MPI_Sendrecv", "sendcount:i32 sendtype:u16 dest:i32 sendtag:i32 recvcount:i32 "
                         "recvtype:u16 source:i32 recvtag:i32 comm:u16 status:status"),
    34: ("MPI_Sendrecv_replace", "count:i32 datatype:u16 dest:i32 sendtag:i32 source:i32 "
                                 "recvtag:i32 comm:u16 status:status"),
    52: ("MPI_Barrier", "comm:u16"),
    53: ("MPI_Bcast", "count:i32 datatype:u16 root:i32 comm:u16"),
    54: ("MPI_Gather", "commrank:i32 sendcount:i32 sendtype:u16 root:i32 comm:u16 "
                       "recvcount?root:i32 recvtype?root:u16"),
    55: ("MPI_Gatherv", "commrank:i32 commsize:i32 sendcount:i32 sendtype:u16 root:i32 comm:u16 "
                        "recvcounts?root:arr displs?root:arr recvtype:u16"),
    56: ("MPI_Scatter", "commrank:i32 recvcount:i32 recvtype:u16 root:i32 comm:u16 "
                        "sendcount?root:i32 sendtype?root:u16"),
    57: ("MPI_Scatterv", "commrank:i32 commsize:i32 sendtype:u16 recvcount:i32 recvtype:u16 "
                         "root:i32 comm:u16 sendcounts?root:arr displs?root:arr"),
    58: ("MPI_Allgather", "sendcount:i32 sendtype:u16 recvcount:i32 recvtype:u16 comm:u16"),
    59: ("MPI_Allgatherv", "commsize:i32 sendcount:i32 sendtype:u16 recvcounts:arr displs:arr "
                           "recvtype:u16 comm:u16"),
    60: ("MPI_Alltoall", "sendcount:i32 sendtype:u16 recvcount:i32 recvtype:u16 comm:u16"),
    61: ("MPI_Alltoallv", "commsize:i32 sendcounts:arr sdispls:arr sendtype:u16 recvcounts:arr "
                          "rdispls:arr recvtype:u16 comm:u16"),
    62: ("MPI_Reduce", "count:i32 datatype:u16 op:u8 root:i32 comm:u16"),
    65: ("MPI_Allreduce", "count:i32 datatype:u16 op:u8 comm:u16"),
    66: ("MPI_Reduce_scatter", "commsize:i32 recvcounts:arr datatype:u16 op:u8 comm:u16"),
    67: ("MPI_Scan", "count:i32 datatype:u16 op:u8 comm:u16"),
    81: ("MPI_Comm_size", "comm:u16 size:i32"),
    82: ("MPI_Comm_rank", "comm:u16 rank:i32"),
    84: ("MPI_Comm_dup", "comm:u16 newcomm:u16"),
    86: ("MPI_Comm_split", "comm:u16 color:i32 key:i32 newcomm:u16"),
    87: ("MPI_Comm_free", "comm:u16"),
    122: ("MPI_Wtime", ""),
    124: ("MPI_Init", "argv:argv"),
    125: ("MPI_Finalize", ""),
    156: ("MPI_Exscan", "count:i32 datatype:u16 op:u8 comm:u16"),
    171: ("MPI_Init_thread", "argv:argv required:u8 provided:u8"),
}


class Reader:
    def __init__(self, data, pos=0):
        self.data = data
        self.pos = pos

    def take(self, n):
        if n < 0 or self.pos + n > len(self.data):
            raise ValueError(f"read of {n} bytes past the end at offset {self.pos}")
        b = self.data[self.pos:self.pos + n]
        self.pos += n
        return b

    def u8(self):
        return self.take(1)[0]

    def u16(self):
        return struct.unpack(">H", self.take(2))[0]

    def u32(self):
        return struct.unpack(">I", self.take(4))[0]

    def i32(self):
        return struct.unpack(">i", self.take(4))[0]

    def u64(self):
        return struct.unpack(">Q", self.take(8))[0]

    def string(self):
        return self.take(self.u16()).decode()

    def status_body(self):
        return {"bytes": self.i32(), "source": self.i32(), "cancelled": self.u8(),
                "error": self.u8(), "tag": self.i32()}

    def statuses(self):
        return [self.status_body() for _ in range(self.u32())]


def read_bin(path):
    """{header, footer, sizes, perf_labels, records}; records are dicts with label, name,
    thread, start_ns, end_ns, perf (list of (in, out)) and the fields of LAYOUTS."""
    data = pathlib_read(path)
    r = Reader(data)
    if r.u64() != HEAD_MAGIC:
        raise ValueError(f"{path}: bad magic")
    idx = Reader(data, len(data) - 64)
    if idx.u64() != HEAD_MAGIC:
        raise ValueError(f"{path}: bad index magic")
    sizelbl, addrlbl, perflbl, header, body, footer, keyval = (idx.u64() for _ in range(7))
    out = {}
    h = Reader(data, header)
    out["header"] = {"version": [h.u8(), h.u8(), h.u8()], "starttime": h.u64(),
                     "hostname": h.string(), "username": h.string(), "meshdim": h.u32()}
    f = Reader(data, footer)
    if f.u64() != FOOT_MAGIC:
        raise ValueError(f"{path}: bad footer magic")
    out["footer"] = {"calls": [f.u32() for _ in range(ALL_FUNCTIONS + 1)],
                     "ignored": [f.u32() for _ in range(ALL_FUNCTIONS + 1)]}
    p = Reader(data, perflbl)
    out["perf_labels"] = [p.string() for _ in range(p.u32())]
    s = Reader(data, sizelbl)
    out["sizes"] = [s.u32() for _ in range(s.u32())]
    out["keyval"] = Reader(data, keyval).u32()
    out["addresses"] = Reader(data, addrlbl).u32()
    b = Reader(data, body)
    cpu_offset, wall_offset = b.u32(), b.u32()
    records = []
    while True:
        label = b.u16()
        if label == END_OF_STREAM:
            break
        if label not in LAYOUTS:
            raise ValueError(f"{path}: unknown label {label} at offset {b.pos - 2}")
        name, layout = LAYOUTS[label]
        rec = {"label": label, "name": name}
        mask = b.u8()
        rec["mask"] = mask
        rec["thread"] = b.u16() if mask & 0x40 else 0
        if mask & 0x04:
            raise ValueError(f"{path}: unexpected CPU times")
        if mask & 0x08:
            s0, n0, s1, n1 = b.u16(), b.u32(), b.u16(), b.u32()
            rec["start_ns"] = (s0 + wall_offset) * 10**9 + n0
            rec["end_ns"] = (s1 + wall_offset) * 10**9 + n1
        rec["perf"] = []
        if mask & 0x80:
            rec["perf"] = [(b.u64(), b.u64()) for _ in range(b.u8())]
        for item in layout.split():
            field, kind = item.split(":")
            if field.endswith("?root"):
                field = field[:-5]
                if rec["commrank"] != rec["root"]:
                    continue
            if kind == "i32":
                rec[field] = b.i32()
            elif kind == "u32":
                rec[field] = b.u32()
            elif kind == "u16":
                rec[field] = b.u16()
            elif kind == "u8":
                rec[field] = b.u8()
            elif kind == "arr":
                rec[field] = [b.i32() for _ in range(b.u32())]
            elif kind == "status":
                n = b.u32()
                if n > 1:
                    raise ValueError(f"{path}: {n} statuses in a single status field")
                rec[field] = b.status_body() if n == 1 else None
            elif kind == "statuses":
                rec[field] = b.statuses()
            elif kind == "argv":
                rec[field] = [b.take(b.u32()).decode() for _ in range(b.u32())]
        records.append(rec)
    if b.pos != header:
        raise ValueError(f"{path}: records end at {b.pos}, header starts at {header}")
    out["cpu_offset"], out["wall_offset"] = cpu_offset, wall_offset
    out["records"] = records
    return out


def pathlib_read(path):
    with open(path, "rb") as f:
        return f.read()
