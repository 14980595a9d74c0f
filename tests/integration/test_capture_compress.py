"""When capture compresses (`encore record --compress`): during the run on the writer thread, or
after it (chunks written raw, each rank packing its files in MPI_Finalize). Both end with the
same data, compressed alike; `auto` picks `after` where the node's ranks leave no core free."""
import json
import os
import re
import unittest

import harness

TOOL = harness.TOOL
ARGS = (4, 20000)  # 4 laps of 160 kB shifts: compressible doubles


def tool(*args, **kw):
    return harness.run([TOOL, *map(str, args)], timeout=120, **kw)


def sizes(trace):
    return {p.name: p.stat().st_size for p in trace.iterdir() if p.name.startswith("rank-")}


class CompressWhen(harness.TempDirTest):
    def record(self, name, *options):
        trace = self.tmp / name
        p = harness.record(trace, 2, harness.example("ring"), *ARGS, options=options)
        manifest = json.loads((trace / "manifest.json").read_text())
        return trace, p, manifest

    def test_after_the_run_ends_as_compressed_as_during_it(self):
        during, p_during, m_during = self.record("during", "--compress", "during")
        after, p_after, m_after = self.record("after", "--compress", "after")
        raw, _, _ = self.record("raw", "--compress", "during", "--zstd-level", "0")
        self.assertEqual(m_during["options"]["compress"], "during")
        self.assertEqual(m_after["options"]["compress"], "after")
        # Nothing left behind by the packing, every rank complete.
        self.assertEqual(sorted(sizes(after)), sorted(sizes(during)))
        self.assertEqual([f for f in os.listdir(after) if f.endswith(".packing")], [])
        check = tool("check", after)
        self.assertEqual(check.stdout.count(": complete"), 2, check.stdout)
        s_during, s_after, s_raw = sizes(during), sizes(after), sizes(raw)
        for name in s_after:
            # The same chunks compressed at the same levels (the writer of `during` may store
            # a poorly compressing payload chunk raw, so not byte for byte).
            self.assertLess(s_after[name], 1.2 * s_during[name] + 4096, name)
            # (An events file of 48 calls is mostly chunk headers and the trailer.)
            self.assertLess(s_after[name], (0.5 if name.endswith(".payload") else 1) * s_raw[name],
                            name)
        # The summary line says where its ratio comes from.
        self.assertRegex(p_after.stderr, r"compression [\d.]+:1 \(after the run; rank 0\)")
        # The data read back is what the program received.
        got = dict(re.findall(r"^digest rank=(\d+) recv=([0-9a-f]{16})$",
                              tool("digest", after, "--until-last", "MPI_Gather").stdout, re.M))
        self.assertEqual({int(r): d for r, d in got.items()},
                         {r: d[0] for r, d in harness.digests(p_after.stdout).items()})

    def test_auto_compresses_after_the_run_when_the_ranks_fill_the_cores(self):
        _, _, m = self.record("auto")
        cores = len(os.sched_getaffinity(0))
        self.assertEqual(m["options"]["compress"], "after" if 2 >= cores else "during", cores)

    def test_a_bad_value_is_a_usage_error(self):
        p = harness.run([TOOL, "record", "-o", self.tmp / "bad", "--compress", "later", "--",
                         "true"], check=False)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("--compress", p.stderr)


if __name__ == "__main__":
    harness.main()
