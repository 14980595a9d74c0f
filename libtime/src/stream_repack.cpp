#include "encore/stream_repack.hpp"

#include <algorithm>
#include <fstream>
#include <span>
#include <string>
#include <system_error>
#include <vector>

#include "encore/chunk_codec.hpp"
#include "encore/error.hpp"
#include "encore/stream_file.hpp"

namespace encore {

namespace {

// Appends `path`'s bytes from `offset` to its end, a piece at a time (a cut chunk's header can
// claim any size: only what the file holds is copied).
std::uint64_t copy_tail(const std::filesystem::path& path, std::uint64_t offset, std::uint64_t end,
                        StreamFileWriter& out) {
  std::ifstream in(path, std::ios::binary);
  in.seekg(static_cast<std::streamoff>(offset));
  std::vector<std::byte> piece(std::min<std::uint64_t>(end - offset, 1 << 16));
  std::uint64_t copied = 0;
  while (in && copied < end - offset) {
    const auto want = std::min<std::uint64_t>(piece.size(), end - offset - copied);
    in.read(reinterpret_cast<char*>(piece.data()), static_cast<std::streamsize>(want));
    const auto got = static_cast<std::uint64_t>(in.gcount());
    if (got == 0) break;
    out.append(std::span<const std::byte>(piece.data(), got));
    copied += got;
  }
  if (copied != end - offset)
    throw Error(format_in(path.string(), "cannot read the cut chunk at offset " +
                                             std::to_string(offset) + " (left uncompressed)"));
  return copied;
}

}  // namespace

RepackStats repack_stream(const std::filesystem::path& path, int level, RepackScope scope) {
  RepackStats stats;
  StreamFileReader in(path);
  stats.bytes_before = in.file_size();
  const std::filesystem::path temp = path.string() + ".packing";
  StreamFileWriter out(temp, in.header());
  ChunkCompressor compressor;
  Chunk chunk;
  try {
    for (;;) {
      const ReadResult r = in.next(chunk);
      if (r == ReadResult::end) break;
      if (r == ReadResult::damage) {
        // A cut last chunk is what a kill leaves: anything else may hide readable chunks after it.
        if (scope != RepackScope::salvage || in.damage().kind != DamageKind::truncated)
          throw Error(in.damage().message + " (left uncompressed)");
        stats.tail_bytes = copy_tail(path, in.damage().offset, stats.bytes_before, out);
        break;
      }
      const bool trailer = chunk.header.kind == ChunkKind::trailer;
      const FramedChunk f =
          compressor.frame(chunk.header, chunk.data, trailer ? kNoCompression : level);
      out.append(f.header, f.body);
      if (!trailer) ++stats.chunks;
      if (!trailer && f.body.size() < chunk.header.stored_size) ++stats.shrunk;
    }
    stats.trailer = in.saw_trailer();
    if (!stats.trailer && scope != RepackScope::salvage)
      throw Error(format_in(path.string(), "no end-of-stream trailer (left uncompressed)"));
    // No fdatasync: the stream being replaced was never synced either, and a rename over it
    // leaves either the old file or the new one.
    out.close();
    stats.bytes_after = out.size();
    std::error_code ec;
    std::filesystem::rename(temp, path, ec);
    if (ec) throw Error(format_in(temp.string(), "cannot rename over the stream: " + ec.message()));
  } catch (...) {
    std::error_code ec;
    std::filesystem::remove(temp, ec);
    throw;
  }
  return stats;
}

}  // namespace encore
