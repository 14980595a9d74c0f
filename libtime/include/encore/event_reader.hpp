// Streaming access to one rank's events: decodes chunk after chunk, holding one chunk in
// memory whatever the trace length. Damage (a cut or corrupt chunk) ends the stream and is
// reported with the file, offset and chunk index; everything before it is delivered.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "encore/event.hpp"
#include "encore/event_repeat.hpp"
#include "encore/stream_file.hpp"
#include "encore/varint.hpp"

namespace encore {

// Decodes one event: its timing fields from `times` and the rest from `body` (an events chunk
// keeps the two in separate columns). `prev_end_ns` is the corrected end of the thread's
// previous event; `payload_offset` the thread's payload stream position (advanced past the
// event's payloads). Throws Error on malformed bytes.
// The columns of an events chunk (see event_format.hpp). With interleaved times, gap,
// duration and overhead all read from the same reader.
struct EventColumns {
  ByteReader gap, duration, overhead, body;
  bool interleaved = false;
  ByteReader& duration_reader() { return interleaved ? gap : duration; }
  ByteReader& overhead_reader() { return interleaved ? gap : overhead; }
  // Splits a chunk's contents; throws Error if its column header is bad.
  static EventColumns of(std::span<const std::byte> chunk);
  bool at_end() const {
    return gap.at_end() && duration.at_end() && overhead.at_end() && body.at_end();
  }
};

void decode_event(EventColumns& in, std::uint64_t prev_end_ns, std::uint64_t& payload_offset,
                  Event& out);
// The same through the checked, table-interpreting path alone (decode_event takes the
// straight-line decoders generated per function and falls back on it near a chunk's end): for
// tests that hold the two against each other.
void decode_event_generic(EventColumns& in, std::uint64_t prev_end_ns,
                          std::uint64_t& payload_offset, Event& out);

class RankEventReader {
 public:
  // Throws Error if the file is missing or its header is bad.
  explicit RankEventReader(const std::filesystem::path& events_file);

  // The next event in file order, or false at the end of what can be read.
  bool next(Event& out);

  // After next() returned false: whether the stream ended cleanly with its trailer.
  bool complete() const noexcept { return ended_clean_; }
  // After next() returned false: what stopped it (empty if complete or merely unterminated).
  const std::string& problem() const noexcept { return problem_; }
  std::uint64_t chunks_read() const noexcept { return reader_.stats().chunks; }
  const StreamFileReader& file() const noexcept { return reader_; }
  // Trailer body (end status and per-thread totals), once complete().
  const std::vector<std::byte>& trailer() const noexcept { return trailer_; }
  // The encoded body of the event next() just gave (valid until the next call): what a
  // writer that re-times recorded events copies instead of encoding them again.
  std::span<const std::byte> last_body() const noexcept { return last_body_; }
  // Where the extras of last_body() start (0: it has none, or the event was decoded the
  // checked way): a writer that drops every extra copies the bytes before.
  std::size_t last_extras_at() const noexcept {
    // extras_p_ is set by fast decoding only, so it lies in the current body only when this
    // event's extras set it (an earlier event's lies before the body, none is null).
    const auto p = reinterpret_cast<std::uintptr_t>(extras_p_);
    const auto b = reinterpret_cast<std::uintptr_t>(last_body_.data());
    return p > b && p < b + last_body_.size() ? static_cast<std::size_t>(p - b) : 0;
  }

 private:
  struct ThreadPos {
    std::uint64_t index = 0;
    std::uint64_t end_ns = 0;
    std::uint64_t payload = 0;
    std::uint64_t overhead = 0;
  };
  // A column of the current chunk as bare pointers, which next() keeps in registers.
  struct Cursor {
    const std::byte* p = nullptr;
    const std::byte* end = nullptr;
  };
  bool load_chunk();
  bool next_chunk();                   // when the chunk is used up: the next one, or false
  void decode_checked(Event& out);     // through columns_ (with their checks and messages)
  void expand_repeat(Event& out);      // a repeated poll (format 1.2), through columns_
  bool fail(const std::exception& e);  // a decoding error: the stream stops there
  void check_chunk_end();              // after a chunk's last event
  void set_cursors();                  // from columns_' positions
  void sync_columns();                 // columns_' positions from the cursors
  bool refill_budget();                // times_budget_ from the time columns' room
  bool next_slow(Event& out);          // through columns_; true for a repeat

  StreamFileReader reader_;
  Chunk chunk_;
  EventColumns columns_;
  Cursor gap_, duration_, overhead_, body_;
  bool split_ = false;  // times in three columns (else interleaved: decode_checked)
  std::uint32_t left_in_chunk_ = 0;
  // Events the time columns surely have room for (kMaxVarintBytes each), so that next()
  // checks their ends once per many events rather than per event; 0 for interleaved chunks.
  std::uint32_t times_budget_ = 0;
  std::uint16_t thread_ = 0;
  std::vector<ThreadPos> threads_;  // by thread id (at most 65536, as the file reader's)
  ThreadPos* pos_ = nullptr;        // threads_[thread_], taken again after each resize
  bool ended_clean_ = false;
  bool done_ = false;
  std::string problem_;
  std::vector<std::byte> trailer_;
  std::span<const std::byte> last_body_;
  const std::byte* extras_p_ = nullptr;  // where the last fast-decoded extras started
  RepeatExpander repeats_;               // format 1.2's repeated polls
};

}  // namespace encore
