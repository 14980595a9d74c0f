// An events chunk in the normal layout (each timing field in its own column, then the bodies),
// built from a segment's records in as many steps as it takes. The writer thread builds a
// chunk in one step when it drains a segment; an application thread that is waiting (a run
// of failed polls) may encode its own records ahead of the writer in bounded steps
// (TraceWriter::help), and the writer then only finishes the chunk. Either way the bytes are
// the same: the encoder is a copy of the stream's, moved on record by record, and the stream's
// own is replaced by it only when the chunk is written (a crash handler still finds the state
// at the last chunk written).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "raw_times.hpp"
#include "scratch_buffer.hpp"
#include "segment.hpp"

namespace encore::dump {

class EventsChunk {
 public:
  // Starts a chunk of `s` at `from` (the segment's flushed mark), times encoded from `enc`'s
  // state. The buffers are sized for the rest of the segment: no step reallocates them.
  void begin(const Segment& s, const Mark& from, const TimeEncoder& enc);
  // Encodes the records before times offset `to_times`, at most about `max_events` of them
  // (a run of lean polls may stop a record past); returns how many it encoded.
  std::uint64_t add(std::uint64_t to_times, std::uint64_t max_events) noexcept;
  // Encodes what is left up to `to` and gathers the chunk into `out`: its bytes.
  std::span<const std::byte> finish(const Mark& to, ScratchBuffer& out);
  // After finish: the stream's encoder as it stands after the chunk.
  const TimeEncoder& encoder() const noexcept { return *enc_; }
  void reset() noexcept { seg_ = nullptr; }
  const Segment* segment() const noexcept { return seg_; }  // the one being built, or null

 private:
  void copy_body(std::size_t upto) noexcept;

  const Segment* seg_ = nullptr;
  std::optional<TimeEncoder> enc_;
  std::array<ScratchBuffer, 3> columns_;
  std::byte* start_[3] = {};
  std::byte* cursor_[3] = {};
  ScratchBuffer bodies_;
  std::byte* body_start_ = nullptr;
  std::byte* b_ = nullptr;
  std::size_t at_ = 0;     // segment body bytes before this offset are in bodies_
  std::size_t times_ = 0;  // records before this offset of the times region are encoded
  bool opened_ = false;    // the chunk's first record was looked at (a run's template)
};

}  // namespace encore::dump
