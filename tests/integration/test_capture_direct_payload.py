"""Payload chunks go to the file past the page cache (O_DIRECT) where the file system allows, so
the writer thread does not copy every received byte into fresh page-cache pages on the rank's
core; `ENCORE_DIRECT_IO=0` writes them through the page cache as before. Either way the trace
holds the same data. Which path was taken is seen in the page cache: a file written directly
has (nearly) none of its pages there."""
import ctypes
import mmap
import os
import re

import harness

TOOL = harness.TOOL
ARGS = (4, 20000)  # 4 laps of 160 kB shifts: about 800 kB of payload a rank
OPTIONS = ("--compress", "during", "--zstd-level", "0")  # raw chunks, no packing afterwards


def resident_fraction(path):
    """The share of the file's pages in the page cache (mincore on a mapping of it)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                          ctypes.c_int, ctypes.c_long]
    libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    size = os.path.getsize(path)
    pages = (size + mmap.PAGESIZE - 1) // mmap.PAGESIZE
    fd = os.open(path, os.O_RDONLY)
    try:
        addr = libc.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
        if addr in (None, ctypes.c_void_p(-1).value):
            raise OSError(ctypes.get_errno(), f"mmap {path}")
        vec = (ctypes.c_ubyte * pages)()
        rc = libc.mincore(addr, size, vec)
        libc.munmap(addr, size)
        if rc != 0:
            raise OSError(ctypes.get_errno(), f"mincore {path}")
    finally:
        os.close(fd)
    return sum(v & 1 for v in vec) / pages


def direct_writes_skip_page_cache(directory):
    """Whether this file system takes O_DIRECT writes and keeps them out of the page cache
    (tmpfs takes the flag but is the page cache)."""
    probe = directory / "probe"
    try:
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_DIRECT, 0o644)
    except OSError:
        return False
    try:
        block = mmap.mmap(-1, 1 << 16)  # page-aligned
        os.write(fd, block)
    except OSError:
        return False
    finally:
        os.close(fd)
    try:
        return resident_fraction(probe) == 0
    finally:
        probe.unlink()


class DirectPayload(harness.TempDirTest):
    def record(self, name, options=OPTIONS, env=None):
        trace = self.tmp / name
        p = harness.record(trace, 2, harness.example("ring"), *ARGS, options=options, env=env)
        return trace, p

    def assert_complete_with_the_programs_data(self, trace, p):
        check = harness.run([TOOL, "check", trace])
        self.assertEqual(check.stdout.count(": complete"), 2, check.stdout)
        got = dict(re.findall(r"^digest rank=(\d+) recv=([0-9a-f]{16})$",
                              harness.run([TOOL, "digest", trace, "--until-last",
                                           "MPI_Gather"]).stdout, re.M))
        self.assertEqual({int(r): d for r, d in got.items()},
                         {r: d[0] for r, d in harness.digests(p.stdout).items()})

    def test_payload_skips_the_page_cache_and_reads_back_the_same(self):
        if not direct_writes_skip_page_cache(self.tmp):
            self.skipTest(f"the file system of {self.tmp} keeps O_DIRECT writes in the page cache")
        direct, p_direct = self.record("direct")
        buffered, p_buffered = self.record("buffered", env={"ENCORE_DIRECT_IO": "0"})
        for rank in (0, 1):
            name = f"rank-{rank:05d}.payload"
            # Measured before anything reads the files back. A direct trace keeps at most the
            # last block of each chunk written through the page cache.
            self.assertLess(resident_fraction(direct / name), 0.1, name)
            self.assertGreater(resident_fraction(buffered / name), 0.5, name)
        self.assert_complete_with_the_programs_data(direct, p_direct)
        self.assert_complete_with_the_programs_data(buffered, p_buffered)

    def test_packed_after_the_run_reads_back_the_same(self):
        # The default where ranks fill the cores: raw chunks written directly, then each rank
        # packs its files in MPI_Finalize, reading them back from the disk.
        self.assert_complete_with_the_programs_data(*self.record("after", ("--compress", "after")))


if __name__ == "__main__":
    harness.main()
