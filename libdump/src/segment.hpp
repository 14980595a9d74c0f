// A segment is a fixed-size slab of trace bytes that one application thread fills and the
// writer thread drains into chunks. The producer publishes how far it got (a Mark) after every
// event through a single-writer seqlock, so the writer can flush a prefix of a segment that is
// still being filled without ever stopping the application.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "segment_memory.hpp"

#include "encore/stream_header.hpp"

namespace encore::dump {

// Where a stream stands after some event: bytes used in the current segment (for events: in
// its body region, and `times` in its times region), events written by the thread so far,
// payload bytes written so far.
// A run of lean polls (Call's LeanPoll) is published with one store: `run` names the run's
// start (the thread's event count there, where the segment's last published mark stands) and
// how many polls it has, each a kLeanTimesBytes record and a 2-byte repeat head.
constexpr std::size_t kLeanTimesBytes = 32;
constexpr std::size_t kLeanBodyBytes = 2;
// A light call recorded without a Call (LightCall, light_record.hpp): one record, no body bytes.
constexpr std::size_t kLightTimesBytes = 80;
constexpr unsigned kRunCountBits = 20;
constexpr std::uint64_t kRunMaxPolls = (std::uint64_t{1} << kRunCountBits) - 1;

struct Mark {
  std::uint64_t bytes = 0;
  std::uint64_t events = 0;
  std::uint64_t payload = 0;
  std::uint64_t times = 0;
};

class Segment {
 public:
  // `populate`: its pages are faulted in now (segment_memory.hpp), so that the thread filling
  // it never takes a page fault.
  Segment(StreamKind kind, std::size_t capacity, bool populate)
      : kind_(kind), capacity_(capacity), data_(map_segment_memory(capacity, populate)) {}
  ~Segment() { unmap_segment_memory(data_, capacity_); }
  Segment(const Segment&) = delete;
  Segment& operator=(const Segment&) = delete;

  StreamKind kind() const noexcept { return kind_; }
  std::size_t capacity() const noexcept { return capacity_; }
  std::byte* data() noexcept { return data_; }
  const std::byte* data() const noexcept { return data_; }

  // An events segment keeps the raw times of its events (fixed-size records the writer
  // encodes) apart from their bodies: the first half holds times, the second the bodies.
  std::size_t times_capacity() const noexcept { return capacity_ / 2; }
  std::byte* times_data() noexcept { return data_; }
  const std::byte* times_data() const noexcept { return data_; }
  std::size_t body_capacity() const noexcept { return capacity_ - capacity_ / 2; }
  std::byte* body_data() noexcept { return data_ + capacity_ / 2; }
  const std::byte* body_data() const noexcept { return data_ + capacity_ / 2; }

  // Producer: publish a new mark (only ever growing).
  void publish(const Mark& m) noexcept {
    const auto s = seq_.load(std::memory_order_relaxed);
    seq_.store(s + 1, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_release);
    bytes_.store(m.bytes, std::memory_order_relaxed);
    events_.store(m.events, std::memory_order_relaxed);
    payload_.store(m.payload, std::memory_order_relaxed);
    times_.store(m.times, std::memory_order_relaxed);
    seq_.store(s + 2, std::memory_order_release);
  }

  // Producer: publish the lean polls of the run that starts at the last published mark.
  static std::uint64_t run_word(std::uint64_t start_events) noexcept {
    return start_events << kRunCountBits;
  }
  std::atomic<std::uint64_t>& run() noexcept { return run_; }

  // Writer: a consistent copy of the last published mark, with the lean polls that follow it.
  // A run that started elsewhere is older (its polls are under the mark) or newer (the mark
  // read is stale): either way it is left out, and the next read sees it.
  Mark published() const noexcept {
    for (;;) {
      const auto s1 = seq_.load(std::memory_order_acquire);
      Mark m{bytes_.load(std::memory_order_relaxed), events_.load(std::memory_order_relaxed),
             payload_.load(std::memory_order_relaxed), times_.load(std::memory_order_relaxed)};
      std::atomic_thread_fence(std::memory_order_acquire);
      if ((s1 & 1) == 0 && seq_.load(std::memory_order_relaxed) == s1) {
        const std::uint64_t run = run_.load(std::memory_order_acquire);
        if (run >> kRunCountBits == m.events) {
          const std::uint64_t polls = run & kRunMaxPolls;
          m.events += polls;
          m.times += polls * kLeanTimesBytes;
          m.bytes += polls * kLeanBodyBytes;
        }
        return m;
      }
    }
  }

  // Resets the segment for a new owner, whose stream stands at `start` (bytes ignored).
  void reset(const Mark& start) noexcept {
    flushed_ = start;
    flushed_.bytes = 0;
    flushed_.times = 0;
    run_.store(0, std::memory_order_relaxed);
    publish(flushed_);
  }

  Mark& flushed() noexcept { return flushed_; }  // writer thread only

 private:
  StreamKind kind_;
  std::size_t capacity_;
  std::byte* data_;
  std::atomic<std::uint64_t> seq_{0};
  std::atomic<std::uint64_t> bytes_{0};
  std::atomic<std::uint64_t> events_{0};
  std::atomic<std::uint64_t> payload_{0};
  std::atomic<std::uint64_t> times_{0};
  std::atomic<std::uint64_t> run_{0};
  Mark flushed_;
};

}  // namespace encore::dump
