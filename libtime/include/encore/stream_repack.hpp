// Compressing a finished stream file after the fact. Capture on a node with no core to spare
// writes its chunks uncompressed while the program runs (compressing there would take CPU from
// the ranks and distort the very times being recorded) and packs them here once it is done.
#pragma once

#include <cstdint>
#include <filesystem>

namespace encore {

struct RepackStats {
  std::uint64_t chunks = 0;        // data chunks rewritten (the trailer is copied as it is)
  std::uint64_t bytes_before = 0;  // file sizes
  std::uint64_t bytes_after = 0;
};

// Rewrites the stream file at `path` with every data chunk compressed at `level` (a chunk
// zstd cannot shrink stays raw), through `path` + ".packing" and a rename, so that a failure
// or a kill at any point leaves the original in place. A file that does not read back whole
// (damaged, cut short, no trailer) is left alone. Throws Error naming the file and why.
RepackStats repack_stream(const std::filesystem::path& path, int level);

}  // namespace encore
