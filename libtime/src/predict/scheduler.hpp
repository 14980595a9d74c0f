// The order in which the models run the ranks, shared by the loggps engine and the compensated
// logged model: each rank advances through its calls until one needs another rank, then parks;
// the rank that supplies the missing piece wakes it. No global event queue: a ring of one slot
// per rank holds the ranks ready to run. Internal to libtime's predict code.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "encore/event.hpp"
#include "encore/predict/feed.hpp"

namespace encore::predict {

// Ranks ready to run, each at most once: a ring of one slot per rank.
class RunQueue {
 public:
  explicit RunQueue(std::size_t n) : ring_(std::max<std::size_t>(n, 1)) {}
  bool empty() const noexcept { return size_ == 0; }
  void push(std::uint32_t r) {
    std::size_t i = head_ + size_++;
    if (i >= ring_.size()) i -= ring_.size();
    ring_[i] = r;
  }
  std::uint32_t pop() {
    const std::uint32_t r = ring_[head_];
    if (++head_ == ring_.size()) head_ = 0;
    --size_;
    return r;
  }

 private:
  std::vector<std::uint32_t> ring_;
  std::size_t head_ = 0, size_ = 0;
};

// One rank's place in its feed: the call it is at and whether that call was posted.
struct RankCursor {
  RankFeed* feed = nullptr;  // owned by the caller
  Event ev;
  std::int64_t compute = 0;
  bool have = false, posted = false, done = false, queued = false;
};

// `State` derives from RankCursor. `finish(rank)` posts the rank's current call if it is not
// posted yet and completes it if it can (true), else leaves it parked (false).
template <class State>
class Scheduler {
 public:
  explicit Scheduler(std::vector<State>& ranks) : ranks_(ranks), queue_(ranks.size()) {}

  // The running rank needs no waking: it checks its call's requests after posting it.
  [[gnu::always_inline]] void wake(std::uint32_t r) {
    RankCursor& s = ranks_[r];
    if (r == running_ || s.queued || s.done) return;
    s.queued = true;
    queue_.push(r);
  }
  void wake_all() {
    for (std::uint32_t r = 0; r < ranks_.size(); ++r) wake(r);
  }

  // Runs ranks until none is ready.
  template <class Finish>
  void drain(Finish&& finish) {
    while (!queue_.empty()) {
      const std::uint32_t r = queue_.pop();
      ranks_[r].queued = false;
      running_ = r;
      advance(r, finish);
      running_ = kNone;
    }
  }

 private:
  template <class Finish>
  void advance(std::uint32_t r, Finish& finish) {
    RankCursor& s = ranks_[r];
    for (;;) {
      if (!s.have) {
        if (!s.feed->next(s.ev, s.compute)) {
          s.done = true;
          return;
        }
        s.have = true;
        s.posted = false;
      }
      if (!finish(r)) return;
    }
  }

  static constexpr std::uint32_t kNone = ~0u;
  std::vector<State>& ranks_;
  RunQueue queue_;
  std::uint32_t running_ = kNone;  // the rank advance() runs
};

}  // namespace encore::predict
