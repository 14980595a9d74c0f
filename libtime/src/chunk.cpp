#include "encore/chunk.hpp"

#include <cstring>
#include <string>

// Inlined so the checksum needs no library state or allocation (signal safety).
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "encore/byte_order.hpp"
#include "encore/error.hpp"

namespace encore {

namespace {
constexpr std::size_t kChecksumOffset = 56;
}

std::string_view to_string(ChunkKind kind) noexcept {
  switch (kind) {
    case ChunkKind::events:
      return "events";
    case ChunkKind::payload:
      return "payload";
    case ChunkKind::trailer:
      return "trailer";
  }
  return "unknown";
}

void encode_header(const ChunkHeader& h, std::span<std::byte, kChunkHeaderSize> out) noexcept {
  std::byte* p = out.data();
  std::memcpy(p, kChunkMagic, sizeof kChunkMagic);
  p[4] = static_cast<std::byte>(h.kind);
  p[5] = static_cast<std::byte>(h.codec);
  store_le<std::uint16_t>(p + 6, h.thread);
  store_le<std::uint64_t>(p + 8, h.seq);
  store_le<std::uint32_t>(p + 16, h.stored_size);
  store_le<std::uint32_t>(p + 20, h.raw_size);
  store_le<std::uint64_t>(p + 24, h.first);
  store_le<std::uint64_t>(p + 32, h.base);
  store_le<std::uint32_t>(p + 40, h.count);
  store_le<std::uint32_t>(p + 44, h.flags);
  store_le<std::uint64_t>(p + 48, h.aux);
  store_le<std::uint64_t>(p + kChecksumOffset, h.checksum);
}

bool parse_header(std::span<const std::byte, kChunkHeaderSize> in, ChunkHeader& h) noexcept {
  const std::byte* p = in.data();
  if (std::memcmp(p, kChunkMagic, sizeof kChunkMagic) != 0) return false;
  h.kind = static_cast<ChunkKind>(p[4]);
  h.codec = static_cast<Codec>(p[5]);
  h.thread = load_le<std::uint16_t>(p + 6);
  h.seq = load_le<std::uint64_t>(p + 8);
  h.stored_size = load_le<std::uint32_t>(p + 16);
  h.raw_size = load_le<std::uint32_t>(p + 20);
  h.first = load_le<std::uint64_t>(p + 24);
  h.base = load_le<std::uint64_t>(p + 32);
  h.count = load_le<std::uint32_t>(p + 40);
  h.flags = load_le<std::uint32_t>(p + 44);
  h.aux = load_le<std::uint64_t>(p + 48);
  h.checksum = load_le<std::uint64_t>(p + kChecksumOffset);
  return true;
}

std::string_view header_problem(const ChunkHeader& h) noexcept {
  const auto kind = static_cast<std::uint8_t>(h.kind);
  if (kind < 1 || kind > 3) return "unknown chunk kind";
  if (h.codec != Codec::raw && h.codec != Codec::zstd) return "unknown chunk codec";
  if (h.stored_size > kMaxChunkBytes) return "stored size exceeds the 64 MiB chunk limit";
  if (h.raw_size > kMaxChunkBytes) return "raw size exceeds the 64 MiB chunk limit";
  if (h.codec == Codec::raw && h.stored_size != h.raw_size)
    return "raw chunk with stored size != raw size";
  if (h.codec == Codec::zstd && h.stored_size == 0) return "empty zstd chunk";
  return {};
}

ChunkHeader decode_header(std::span<const std::byte, kChunkHeaderSize> in) {
  ChunkHeader h;
  if (!parse_header(in, h)) throw Error("bad chunk magic");
  if (const std::string_view why = header_problem(h); !why.empty()) throw Error(std::string(why));
  return h;
}

std::uint64_t chunk_checksum(std::span<const std::byte, kChunkHeaderSize> header,
                             std::span<const std::byte> stored) noexcept {
  XXH64_state_t state;
  XXH64_reset(&state, 0);
  XXH64_update(&state, header.data(), kChecksumOffset);
  XXH64_update(&state, stored.data(), stored.size());
  return XXH64_digest(&state);
}

static_assert(sizeof(XXH64_state_t) <= 96 && alignof(XXH64_state_t) <= 16);

bool RawChunkHeader::start(const ChunkHeader& fields, std::size_t size,
                           std::byte (&out)[kChunkHeaderSize]) noexcept {
  if (size > kMaxChunkBytes) return false;
  ChunkHeader h = fields;
  h.codec = Codec::raw;
  h.stored_size = h.raw_size = static_cast<std::uint32_t>(size);
  h.checksum = 0;
  encode_header(h, std::span<std::byte, kChunkHeaderSize>(out));
  auto* state = reinterpret_cast<XXH64_state_t*>(state_);
  XXH64_reset(state, 0);
  XXH64_update(state, out, kChecksumOffset);
  return true;
}

void RawChunkHeader::add(std::span<const std::byte> piece) noexcept {
  XXH64_update(reinterpret_cast<XXH64_state_t*>(state_), piece.data(), piece.size());
}

void RawChunkHeader::finish(std::byte (&out)[kChunkHeaderSize]) noexcept {
  store_le<std::uint64_t>(out + kChecksumOffset,
                          XXH64_digest(reinterpret_cast<XXH64_state_t*>(state_)));
}

bool write_raw_chunk_header(const ChunkHeader& fields,
                            std::span<const std::span<const std::byte>> parts,
                            std::byte (&out)[kChunkHeaderSize]) noexcept {
  std::size_t size = 0;
  for (const auto& part : parts) size += part.size();
  RawChunkHeader h;
  if (!h.start(fields, size, out)) return false;
  for (const auto& part : parts) h.add(part);
  h.finish(out);
  return true;
}

bool write_raw_chunk_header(const ChunkHeader& fields, std::span<const std::byte> data,
                            std::byte (&out)[kChunkHeaderSize]) noexcept {
  return write_raw_chunk_header(fields, std::span<const std::span<const std::byte>>(&data, 1), out);
}

std::vector<std::byte> make_trailer(std::uint64_t data_chunks, std::span<const std::byte> body) {
  ChunkHeader fields;
  fields.kind = ChunkKind::trailer;
  fields.first = data_chunks;
  std::byte header[kChunkHeaderSize];
  if (!write_raw_chunk_header(fields, body, header))
    throw Error("trailer body exceeds the 64 MiB chunk limit");
  std::vector<std::byte> out(kChunkHeaderSize + body.size());
  std::memcpy(out.data(), header, kChunkHeaderSize);
  if (!body.empty()) std::memcpy(out.data() + kChunkHeaderSize, body.data(), body.size());
  return out;
}

ChunkHeader verify_chunk(std::span<const std::byte> chunk) {
  if (chunk.size() < kChunkHeaderSize)
    throw Error("chunk of " + std::to_string(chunk.size()) + " bytes is shorter than its header");
  const auto header = chunk.first<kChunkHeaderSize>();
  const ChunkHeader h = decode_header(header);
  if (chunk.size() - kChunkHeaderSize != h.stored_size)
    throw Error("chunk length " + std::to_string(chunk.size()) + " does not match its header (" +
                std::to_string(kChunkHeaderSize + h.stored_size) + ")");
  if (chunk_checksum(header, chunk.subspan(kChunkHeaderSize)) != h.checksum)
    throw Error("chunk checksum mismatch");
  return h;
}

}  // namespace encore
