"""Events encoded in place in the capture segments: a run whose events fill the times region
first, the body region first, and exceed the room left and a whole segment is recorded
completely, decodes to the calls it made, and replays with the same received data."""
import json
import os
import re

import harness

PROGRAM = os.path.join(os.environ.get("ENCORE_TEST_PROGRAMS", "build/tests/programs"),
                       "test_segments")
TINY, MESSAGES, BLOCKS = 150000, 40000, 300000
TYPES = 4  # BLOCKS/8, /4, /2 and BLOCKS


class Segments(harness.TempDirTest):
    def test_every_event_recorded_and_replayed(self):
        trace = self.tmp / "trace"
        args = (TINY, MESSAGES, BLOCKS)
        real = harness.record(trace, 2, PROGRAM, *args)
        check = harness.run([harness.TOOL, "check", str(trace)])
        self.assertRegex(check.stdout, r"rank 0: complete")
        self.assertRegex(check.stdout, r"rank 1: complete")
        doc = json.loads(harness.run([harness.TOOL, "stats", str(trace), "--json"]).stdout)
        for rank, p2p in ((0, "MPI_Send"), (1, "MPI_Recv")):
            calls = {f["name"]: f["calls"] for f in doc["ranks"][rank]["functions"]}
            self.assertEqual(calls["MPI_Comm_rank"], TINY)
            self.assertEqual(calls[p2p], MESSAGES + TYPES)
            self.assertEqual(calls["MPI_Type_indexed"], TYPES)
        # Rank 1 alone, fed from the trace: the indexed types' arrays (events larger than a
        # segment) must match the program's own, and the received data its digest.
        out = harness.run([harness.TOOL, "replay", "--rank", "1", str(trace), "--", PROGRAM,
                           *map(str, args)], timeout=300)
        self.assertNotIn("differs from the recorded run", out.stderr)
        digest = re.search(r"^digest rank=1 [0-9a-f]{16}$", real.stdout, re.M)
        self.assertIsNotNone(digest)
        self.assertIn(digest.group(0), out.stdout)


if __name__ == "__main__":
    harness.main()
