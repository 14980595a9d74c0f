// The writer's view of an events segment between two marks: its times records in turn (a
// RawTimes, a LeanTimes from the lean poll path, or a LightTimes from the light-call path: the
// first word, the flags, says which), and the bodies of its events as pieces of bytes in event
// order. Used by the chunk builder and by the crash handler alike (no allocation).
#pragma once

#include <cstring>
#include <span>

#include "light_record.hpp"
#include "raw_times.hpp"
#include "segment.hpp"

namespace encore::dump {

// Calls `each` with every record from `p` to `end` in turn, each copied out whole first.
// Returns the first record's flags.
template <class Each>
std::uint64_t for_each_record(const std::byte* p, const std::byte* end, Each each) {
  std::uint64_t first = 0;
  for (bool at_first = true; p < end; at_first = false) {
    std::uint64_t flags;
    std::memcpy(&flags, p, sizeof flags);
    if (at_first) first = flags;
    if (flags & RawTimes::kLean) {
      LeanTimes r;
      std::memcpy(&r, p, sizeof r);
      p += sizeof r;
      each(r);
    } else if (flags & RawTimes::kLight) {
      LightTimes r;
      std::memcpy(&r, p, sizeof r);
      p += sizeof r;
      each(r);
    } else {
      RawTimes r;
      std::memcpy(&r, p, sizeof r);
      p += sizeof r;
      each(r);
    }
  }
  return first;
}

// Calls `emit` with the bodies of the events from `from` to `to`, in order, as pieces: the
// segment's body bytes, with each light call's body (which the application thread left as a
// record) encoded and spliced in at its offset. A chunk that starts inside a run of repeated
// failed polls (format 1.2) starts with the run's template instead of the first repeat head,
// so that every chunk decodes on its own; the template is earlier in the same segment (a run
// never crosses segments, and a template is never a light call: light calls are not polls).
template <class Emit>
void for_each_body(const Segment& s, const Mark& from, const Mark& to, Emit emit) {
  const std::byte* body = s.body_data();
  std::size_t at = from.bytes;
  const auto piece = [&](std::size_t upto) {
    if (upto > at) emit(std::span<const std::byte>(body + at, upto - at));
    at = upto;
  };
  bool first = true;
  for_each_record(s.times_data() + from.times, s.times_data() + to.times, [&](const auto& r) {
    using R = std::decay_t<decltype(r)>;
    if (first && RawTimes::repeat(r.flags)) {
      emit(std::span<const std::byte>(body + RawTimes::repeat_at(r.flags),
                                      RawTimes::repeat_len(r.flags)));
      at += 2;
    }
    first = false;
    if constexpr (std::is_same_v<R, LightTimes>) {
      piece(r.body_at);
      std::byte tmp[kLightBodyMax];
      emit(std::span<const std::byte>(tmp, encode_light_body(r, tmp)));
    }
  });
  piece(to.bytes);
}

}  // namespace encore::dump
