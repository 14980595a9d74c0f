// Chunk framing: the 64-byte header that precedes every block of stored bytes
// in a stream file. Chunk contents are opaque at this layer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace encore {

inline constexpr std::size_t kChunkHeaderSize = 64;
// Upper bound for raw_size and stored_size: readers allocate at most this
// much per buffer, whatever a damaged or hostile file claims.
inline constexpr std::uint32_t kMaxChunkBytes = 64u << 20;
inline constexpr char kChunkMagic[4] = {'E', 'C', 'H', 'K'};

enum class ChunkKind : std::uint8_t { events = 1, payload = 2, trailer = 3 };
enum class Codec : std::uint8_t { raw = 0, zstd = 1 };

std::string_view to_string(ChunkKind kind) noexcept;

// Field meanings are in doc/trace-format.md ("Chunk header").
struct ChunkHeader {
  ChunkKind kind = ChunkKind::events;
  Codec codec = Codec::raw;
  std::uint16_t thread = 0;
  std::uint64_t seq = 0;
  std::uint32_t stored_size = 0;
  std::uint32_t raw_size = 0;
  std::uint64_t first = 0;
  std::uint64_t base = 0;
  std::uint32_t count = 0;
  std::uint32_t flags = 0;
  std::uint64_t aux = 0;
  std::uint64_t checksum = 0;
};

// Serialises every field as given (checksum included, not recomputed).
// Allocation-free and async-signal-safe.
void encode_header(const ChunkHeader& h, std::span<std::byte, kChunkHeaderSize> out) noexcept;

// Why a header's fields are invalid (bad kind, codec or sizes), or empty if
// they are fine. Does not look at the checksum. Returns static text.
std::string_view header_problem(const ChunkHeader& h) noexcept;

// Parses and validates magic, kind, codec and sizes; throws Error on failure.
ChunkHeader decode_header(std::span<const std::byte, kChunkHeaderSize> in);

// Parses without validating (for readers that classify problems themselves).
// Returns false only if the magic is wrong.
bool parse_header(std::span<const std::byte, kChunkHeaderSize> in, ChunkHeader& out) noexcept;

// XXH64 (seed 0) over header bytes 0..55 followed by the stored bytes.
// Allocation-free and async-signal-safe.
std::uint64_t chunk_checksum(std::span<const std::byte, kChunkHeaderSize> header,
                             std::span<const std::byte> stored) noexcept;

// For crash handlers: fills `out` with a complete raw-codec header for
// `data` (sizes and checksum computed; kind, thread, seq, first, base, count,
// aux taken from `fields`). Pure, allocation-free, async-signal-safe. Returns
// false, leaving `out` untouched, if data is larger than kMaxChunkBytes.
bool write_raw_chunk_header(const ChunkHeader& fields, std::span<const std::byte> data,
                            std::byte (&out)[kChunkHeaderSize]) noexcept;

// The same for data given in pieces, written after the header in order.
bool write_raw_chunk_header(const ChunkHeader& fields,
                            std::span<const std::span<const std::byte>> parts,
                            std::byte (&out)[kChunkHeaderSize]) noexcept;

// For crash handlers whose chunk data is produced piece by piece and cannot be gathered in
// memory: start() fills `out` for `size` stored bytes (known beforehand), add() takes the
// pieces in order, finish() stores the checksum in `out`. Allocation-free, async-signal-safe.
class RawChunkHeader {
 public:
  // False, leaving `out` untouched, if size is larger than kMaxChunkBytes.
  bool start(const ChunkHeader& fields, std::size_t size,
             std::byte (&out)[kChunkHeaderSize]) noexcept;
  void add(std::span<const std::byte> piece) noexcept;
  void finish(std::byte (&out)[kChunkHeaderSize]) noexcept;

 private:
  alignas(16) unsigned char state_[96];  // an XXH64_state_t
};

// The end-of-stream trailer a writer appends when it closes a stream
// cleanly: kind trailer, raw codec, `first` = number of data chunks written
// before it, optional opaque body.
std::vector<std::byte> make_trailer(std::uint64_t data_chunks,
                                    std::span<const std::byte> body = {});

// Checks a complete in-memory chunk (header + stored bytes, nothing more):
// header fields, length and checksum. Returns its header; throws Error.
ChunkHeader verify_chunk(std::span<const std::byte> chunk);

}  // namespace encore
