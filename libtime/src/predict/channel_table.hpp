// The loggps engine's message channels: posted sends and receives waiting for their match,
// per (source, destination, communicator, tag). An open-addressing table whose channels stay
// in place when they empty, so the steady state of a program that talks to the same peers
// allocates nothing per message; empty channels are dropped when the table fills, which
// keeps its size proportional to the channels holding messages, not to the trace length.
// Internal to libtime's predict code.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace encore::predict {

struct ChannelKey {
  std::uint32_t src = 0, dst = 0, comm = 0;
  std::int64_t tag = 0;
  bool operator==(const ChannelKey&) const = default;
};

// A first-in first-out queue over a vector whose storage is kept when it empties.
template <class T>
class Fifo {
 public:
  bool empty() const noexcept { return head_ == v_.size(); }
  std::size_t size() const noexcept { return v_.size() - head_; }
  const T& front() const { return v_[head_]; }
  void push(const T& x) { v_.push_back(x); }
  // Removes the first element for which `pred` holds; false if there is none.
  template <class Pred>
  bool erase_first(Pred pred) {
    for (std::size_t i = head_; i < v_.size(); ++i) {
      if (!pred(v_[i])) continue;
      v_.erase(v_.begin() + static_cast<std::ptrdiff_t>(i));
      if (head_ == v_.size()) {
        v_.clear();
        head_ = 0;
      }
      return true;
    }
    return false;
  }
  T pop() {
    T x = v_[head_++];
    if (head_ == v_.size()) {
      v_.clear();
      head_ = 0;
    }
    return x;
  }

 private:
  std::vector<T> v_;
  std::size_t head_ = 0;
};

template <class Send, class Recv, class Probe = Recv>
class ChannelTable {
 public:
  struct Channel {
    ChannelKey key;
    bool used = false;
    Fifo<Send> sends;
    Fifo<Recv> recvs;
    std::vector<Probe> probes;  // waiting for a later send, which they do not take
    bool empty() const noexcept { return sends.empty() && recvs.empty() && probes.empty(); }
  };

  // Where a caller last found a channel: valid while the table has not been rebuilt.
  struct Hint {
    std::uint32_t slot = 0, generation = ~0u;
  };

  ChannelTable() : slots_(kMinSlots) {}

  // The channel of `key`, found first where `hint` says (a rank talks to the same few peers
  // over and over), else by hashing; `hint` then points at it.
  [[gnu::always_inline]] Channel& get(const ChannelKey& key, Hint& hint) {
    if (hint.generation == generation_) {
      Channel& c = slots_[hint.slot];
      if (c.key == key && c.used) return c;
    }
    return get_and_hint(key, hint);
  }

  // The channel of `key`, created empty if the table has none.
  Channel& get(const ChannelKey& key) {
    std::size_t i = home(key);
    for (;; i = (i + 1) & (slots_.size() - 1)) {
      Channel& c = slots_[i];
      if (!c.used) break;
      if (c.key == key) return c;
    }
    if (2 * (used_ + 1) > slots_.size()) {
      rebuild();
      return get(key);
    }
    Channel& c = slots_[i];
    c.used = true;
    c.key = key;
    ++used_;
    return c;
  }
  [[gnu::noinline]] Channel& get_and_hint(const ChannelKey& key, Hint& hint) {
    Channel& c = get(key);
    hint = {static_cast<std::uint32_t>(&c - slots_.data()), generation_};
    return c;
  }
  // Slots allocated (for tests: bounded by the busy channels, not by how many there were).
  std::size_t capacity() const noexcept { return slots_.size(); }

 private:
  static constexpr std::size_t kMinSlots = 64;

  std::size_t home(const ChannelKey& k) const noexcept {
    std::uint64_t h = (static_cast<std::uint64_t>(k.src) * 0x9E3779B97F4A7C15ull) ^
                      (static_cast<std::uint64_t>(k.dst) << 21) ^
                      (static_cast<std::uint64_t>(k.comm) << 42);
    h ^= static_cast<std::uint64_t>(k.tag) * 0xC2B2AE3D27D4EB4Full;
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ull;
    return static_cast<std::size_t>(h >> 32) & (slots_.size() - 1);
  }

  // Keeps the channels that hold posts, in a table four times their number (at least the
  // minimum): the table never holds more than twice the busy channels plus a constant.
  void rebuild() {
    std::size_t busy = 0;
    for (const Channel& c : slots_) busy += c.used && !c.empty();
    std::vector<Channel> old = std::exchange(
        slots_, std::vector<Channel>(std::max(kMinSlots, std::bit_ceil(4 * busy + 4))));
    used_ = 0;
    ++generation_;
    for (Channel& c : old)
      if (c.used && !c.empty()) {
        std::size_t i = home(c.key);
        while (slots_[i].used) i = (i + 1) & (slots_.size() - 1);
        slots_[i] = std::move(c);
        ++used_;
      }
  }

  std::vector<Channel> slots_;
  std::size_t used_ = 0;
  std::uint32_t generation_ = 0;  // rebuilds so far: a Hint of another generation is stale
};

}  // namespace encore::predict
