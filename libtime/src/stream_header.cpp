#include "encore/stream_header.hpp"

#include <cstring>
#include <string>

#include "encore/error.hpp"

namespace encore {

std::string_view to_string(StreamKind kind) noexcept {
  switch (kind) {
    case StreamKind::events:
      return "events";
    case StreamKind::payload:
      return "payload";
  }
  return "unknown";
}

// Layout (little-endian): 0 magic[8], 8 u16 major, 10 u16 minor, 12 u8 kind,
// 13 u8 byte order, 14 u16 reserved, 16 u32 rank, 20 u32 flags, 24 u64 reserved.
void encode_file_header(const FileHeader& h, std::span<std::byte, kFileHeaderSize> out) noexcept {
  std::byte* p = out.data();
  std::memset(p, 0, kFileHeaderSize);
  std::memcpy(p, kStreamMagic, sizeof kStreamMagic);
  store_le<std::uint16_t>(p + 8, h.major);
  store_le<std::uint16_t>(p + 10, h.minor);
  p[12] = static_cast<std::byte>(h.kind);
  p[13] = static_cast<std::byte>(h.byte_order);
  store_le<std::uint32_t>(p + 16, h.rank);
  store_le<std::uint32_t>(p + 20, h.flags);
}

FileHeader decode_file_header(std::span<const std::byte, kFileHeaderSize> in,
                              std::string_view path) {
  const std::byte* p = in.data();
  if (std::memcmp(p, kStreamMagic, sizeof kStreamMagic) != 0)
    throw Error(format_in(path, "not an Encore stream file (bad magic)"));
  FileHeader h;
  h.major = load_le<std::uint16_t>(p + 8);
  h.minor = load_le<std::uint16_t>(p + 10);
  // Version first: a future major may have changed every other field.
  if (h.major != kFormatMajor) {
    const std::string version = std::to_string(h.major) + "." + std::to_string(h.minor);
    const std::string ours = std::to_string(kFormatMajor) + ".x";
    throw Error(format_in(
        path,
        h.major > kFormatMajor
            ? "format version " + version + " is newer than this reader (" + ours + ")"
            : "format version " + version + " is older than this reader supports (" + ours + ")"));
  }
  const auto kind = static_cast<std::uint8_t>(p[12]);
  if (kind != 1 && kind != 2)
    throw Error::at(path, "unknown stream kind " + std::to_string(kind), 12);
  h.kind = static_cast<StreamKind>(kind);
  const auto order = static_cast<std::uint8_t>(p[13]);
  if (order != 1 && order != 2)
    throw Error::at(path, "unknown byte order " + std::to_string(order), 13);
  h.byte_order = static_cast<ByteOrder>(order);
  // Reserved fields and unknown flags are ignored: minor versions may use them.
  h.rank = load_le<std::uint32_t>(p + 16);
  h.flags = load_le<std::uint32_t>(p + 20);
  return h;
}

}  // namespace encore
