// The 32-byte header that opens every stream file (rank-NNNNN.events/.payload).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "encore/byte_order.hpp"

namespace encore {

inline constexpr std::uint16_t kFormatMajor = 1;
// 1.1: attribute values, dist-graph neighbours; 1.2: repeated failed polls
inline constexpr std::uint16_t kFormatMinor = 4;
inline constexpr std::size_t kFileHeaderSize = 32;
// "ENCSTRM" followed by a NUL byte.
inline constexpr char kStreamMagic[8] = {'E', 'N', 'C', 'S', 'T', 'R', 'M', '\0'};

enum class StreamKind : std::uint8_t { events = 1, payload = 2 };

std::string_view to_string(StreamKind kind) noexcept;

struct FileHeader {
  std::uint16_t major = kFormatMajor;
  std::uint16_t minor = kFormatMinor;
  StreamKind kind = StreamKind::events;
  ByteOrder byte_order = host_byte_order();  // of the host that wrote the payloads
  std::uint32_t rank = 0;
  std::uint32_t flags = 0;
};

void encode_file_header(const FileHeader& h, std::span<std::byte, kFileHeaderSize> out) noexcept;

// Validates magic, version (rejects majors other than kFormatMajor with a
// message naming both versions), kind and byte order. `path` only feeds
// error messages. Throws Error.
FileHeader decode_file_header(std::span<const std::byte, kFileHeaderSize> in,
                              std::string_view path);

}  // namespace encore
