#include "encore/stream_repack.hpp"

#include <string>
#include <system_error>

#include "encore/chunk_codec.hpp"
#include "encore/error.hpp"
#include "encore/stream_file.hpp"

namespace encore {

RepackStats repack_stream(const std::filesystem::path& path, int level) {
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
      if (r == ReadResult::damage) throw Error(in.damage().message + " (left uncompressed)");
      const bool trailer = chunk.header.kind == ChunkKind::trailer;
      const FramedChunk f =
          compressor.frame(chunk.header, chunk.data, trailer ? kNoCompression : level);
      out.append(f.header, f.body);
      if (!trailer) ++stats.chunks;
    }
    if (!in.saw_trailer())
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
