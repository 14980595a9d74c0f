"""Raw bodies: light calls (MPI_Send, MPI_Recv, MPI_Isend, MPI_Irecv...) leave their fields as
plain words for the writer thread to encode. The trace must read back exactly as when each
call encodes its own body (ENCORE_RAW_BODIES=0): the same events with the same arguments,
statuses, send hashes and received payloads, across chunk cuts (a flush every 10 ms), full
segments, runs of lean polls, and when a crash leaves the signal handler to encode them."""
import os
import re

import harness

PROGRAMS = os.environ.get("ENCORE_TEST_PROGRAMS", "build/tests/programs")
LOOPS = os.path.join(os.environ.get("ENCORE_BUILD_DIR", "build"), "bench/bench_capture_loops")
TIMES = re.compile(r"^(r\d+ t\d+) #\d+ (MPI_\w+)  [\d.]+ ms \+\S+")


def shown(trace, rank, drop=()):
    """`encore show --payload` of one rank without the times and event indices (a run of
    polls is as long as the machine makes it: `drop` leaves such functions out, as it does
    MPI_Wtime, whose value is the time)."""
    drop = {"MPI_Wtime", *drop}
    p = harness.run([harness.TOOL, "show", str(trace), "--payload", "--rank", str(rank)],
                    check=False)
    lines = []
    for line in p.stdout.splitlines():
        m = TIMES.match(line)
        if m and m.group(2) in drop:
            continue
        lines.append(TIMES.sub(r"\1 \2", line))
    return p, lines


class RawBodies(harness.TempDirTest):
    def record_both(self, program, *args, options=("--flush-ms", "10"), check=True):
        out = {}
        for raw in ("0", "1"):
            trace = self.tmp / f"raw{raw}"
            out[raw] = (trace, harness.record(trace, 2, program, *args, options=options,
                                              env={"ENCORE_RAW_BODIES": raw}, check=check))
        return out

    def assert_same(self, traces, drop=(), min_calls=None):
        for rank in (0, 1):
            p0, encoded = shown(traces["0"][0], rank, drop)
            p1, raw = shown(traces["1"][0], rank, drop)
            self.assertEqual(p1.returncode, p0.returncode, p1.stderr)
            self.assertEqual(raw, encoded, f"rank {rank}")
            for fn, least in (min_calls or {}).items():
                self.assertGreaterEqual(sum(f" {fn} " in l or l.endswith(f" {fn}")
                                            for l in raw), least, (rank, fn))

    def test_examples_read_back_the_same(self):
        for name, args, calls in (("ring", (), {"MPI_Send": 1, "MPI_Recv": 1}),
                                  ("halo2d", (64, 30), {"MPI_Isend": 60, "MPI_Irecv": 60})):
            with self.subTest(name):
                self.assert_same(self.record_both(harness.example(name), *args),
                                 min_calls=calls)
                for raw in ("0", "1"):
                    harness.run([harness.TOOL, "check", str(self.tmp / f"raw{raw}")])

    def test_pingpong_and_polls_read_back_the_same(self):
        # 8-byte ping-pong: send hashes and received payloads in every event, many segments;
        # the Iprobe loop's lean polls fill a segment's times region first (the light calls
        # between them then find no room for their times, and encode their bodies).
        traces = self.record_both(LOOPS, 6000, 0, "all", options=("--flush-ms", "10"))
        self.assert_same(traces, drop={"MPI_Iprobe"},
                         min_calls={"MPI_Send": 7000, "MPI_Recv": 7000})

    def test_a_crash_encodes_the_raw_bodies(self):
        # No flush before rank 1's SIGSEGV: its signal handler writes every event, raw
        # bodies encoded on the spot.
        traces = self.record_both(f"{PROGRAMS}/test_crash_mid", 300, "light",
                                  options=("--flush-ms", "600000"), check=False)
        for raw in ("0", "1"):
            self.assertNotEqual(traces[raw][1].returncode, 0)
        p, lines = shown(traces["1"][0], 1)
        self.assertNotIn("Segmentation", p.stderr)
        self.assertEqual(sum(" MPI_Send " in l for l in lines), 300, "\n".join(lines[-5:]))
        self.assertEqual(sum(" MPI_Recv " in l for l in lines), 300)
        self.assertEqual(lines, shown(traces["0"][0], 1)[1])


if __name__ == "__main__":
    harness.main()
