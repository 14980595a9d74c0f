// Compressing a finished stream file after the fact. Capture on a node with no core to spare
// writes its chunks uncompressed while the program runs (compressing there would take CPU from
// the ranks and distort the very times being recorded) and packs them here once it is done.
#pragma once

#include <cstdint>
#include <filesystem>

namespace encore {

struct RepackStats {
  std::uint64_t chunks = 0;        // data chunks rewritten (the trailer is copied as it is)
  std::uint64_t shrunk = 0;        // of which stored smaller than before
  std::uint64_t bytes_before = 0;  // file sizes
  std::uint64_t bytes_after = 0;
  std::uint64_t tail_bytes = 0;  // a cut last chunk's bytes, kept as they were (salvage)
  bool trailer = false;          // the stream was closed cleanly
};

// Which streams repack_stream takes. `finished`: only a stream that reads back whole, with
// its trailer (capture's own packing at MPI_Finalize). `salvage` (`encore pack`): also one that
// stops without a trailer or inside its last chunk, as a killed rank leaves it; the cut chunk's
// bytes are copied after the packed ones, so a reader finds the same cut at the same chunk.
enum class RepackScope : std::uint8_t { finished, salvage };

// Rewrites the stream file at `path` with every data chunk compressed at `level` (a chunk
// zstd cannot shrink stays raw), through `path` + ".packing" and a rename, so that a failure
// or a kill at any point leaves the original in place. A file that does not read back whole
// (damaged, cut short, no trailer; with `salvage`, only damage before the last chunk) is left
// alone. Throws Error naming the file and why.
RepackStats repack_stream(const std::filesystem::path& path, int level,
                          RepackScope scope = RepackScope::finished);

}  // namespace encore
