#include "events_chunk.hpp"

#include <algorithm>
#include <cstring>

#include "light_body.hpp"
#include "light_record.hpp"

#include "encore/event_format.hpp"
#include "encore/varint.hpp"

namespace encore::dump {

static_assert(sizeof(RawTimes) >= kLeanTimesBytes && sizeof(LightTimes) >= kLeanTimesBytes);
static_assert(kLightBodyMax <= 2 * kLightTimesBytes);

void EventsChunk::begin(const Segment& s, const Mark& from, const TimeEncoder& enc) {
  seg_ = &s;
  enc_ = enc;
  // Every record takes at least kLeanTimesBytes of times and at most kMaxVarintBytes a column;
  // the bodies: the segment's bytes, a run's template (at most the body region), and at most
  // kLightBodyMax bytes a light record (80 bytes of times each).
  const std::size_t times_left = s.times_capacity() - from.times;
  const std::size_t need = (times_left / kLeanTimesBytes + 1) * kMaxVarintBytes;
  for (unsigned i = 0; i < 3; ++i) cursor_[i] = start_[i] = columns_[i].reserve(need);
  b_ = body_start_ = bodies_.reserve(2 * s.body_capacity() + 2 * times_left);
  at_ = from.bytes;
  times_ = from.times;
  opened_ = false;
}

void EventsChunk::copy_body(std::size_t upto) noexcept {
  if (upto > at_) {
    std::memcpy(b_, seg_->body_data() + at_, upto - at_);
    b_ += upto - at_;
    at_ = upto;
  }
}

std::uint64_t EventsChunk::add(std::uint64_t to_times, std::uint64_t max_events) noexcept {
  const std::byte* const base = seg_->times_data();
  const std::byte* p = base + times_;
  const std::byte* const end = base + to_times;
  if (!opened_ && p < end) {
    opened_ = true;
    std::uint64_t first;
    std::memcpy(&first, p, sizeof first);
    if (RawTimes::repeat(first)) {  // a chunk that starts inside a run starts with its template
      std::memcpy(b_, seg_->body_data() + RawTimes::repeat_at(first), RawTimes::repeat_len(first));
      b_ += RawTimes::repeat_len(first);
      at_ += 2;
    }
  }
  std::uint64_t n = 0;
  while (p < end && n < max_events) {
    std::uint64_t flags;
    std::memcpy(&flags, p, sizeof flags);
    if (flags & RawTimes::kLean) {
      const auto room = static_cast<std::size_t>(end - p) / kLeanTimesBytes;
      const std::byte* const stop =
          p + std::min<std::uint64_t>(room, max_events - n) * kLeanTimesBytes;
      const std::byte* const q = enc_->encode_lean_run(p, stop, cursor_);
      n += static_cast<std::uint64_t>(q - p) / kLeanTimesBytes;
      p = q;
    } else if (flags & RawTimes::kLight) {
      LightTimes r;
      std::memcpy(&r, p, sizeof r);
      p += sizeof r;
      enc_->encode(r, cursor_);
      copy_body(r.body_at);
      b_ += encode_light_body_fast(r, b_);
      ++n;
    } else {
      RawTimes r;
      std::memcpy(&r, p, sizeof r);
      p += sizeof r;
      enc_->encode(r, cursor_);
      ++n;
    }
  }
  times_ = static_cast<std::size_t>(p - base);
  return n;
}

std::span<const std::byte> EventsChunk::finish(const Mark& to, ScratchBuffer& out) {
  add(to.times, ~std::uint64_t{0});
  copy_body(to.bytes);
  std::byte prefix[1 + 3 * kMaxVarintBytes];
  prefix[0] = std::byte{event_format::kSplitTimes};
  std::size_t prefix_len = 1;
  std::size_t size = 0;
  for (unsigned i = 0; i < 3; ++i) {
    const auto len = static_cast<std::size_t>(cursor_[i] - start_[i]);
    prefix_len += encode_uvarint(len, prefix + prefix_len);
    size += len;
  }
  const auto body_len = static_cast<std::size_t>(b_ - body_start_);
  size += prefix_len + body_len;
  std::byte* const chunk = out.reserve(size);
  std::byte* c = chunk;
  std::memcpy(c, prefix, prefix_len);
  c += prefix_len;
  for (unsigned i = 0; i < 3; ++i) {
    const auto len = static_cast<std::size_t>(cursor_[i] - start_[i]);
    std::memcpy(c, start_[i], len);
    c += len;
  }
  std::memcpy(c, body_start_, body_len);
  return {chunk, size};
}

}  // namespace encore::dump
