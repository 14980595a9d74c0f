// A one-line progress bar on stderr for long exports: redrawn at most ten times a second,
// silent when disabled (stderr not a terminal), so callers can advance it on every event.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace encore::exporter {

class Progress {
 public:
  // `total` events expected (0: unknown, shows a count only).
  Progress(bool enabled, std::string label, std::uint64_t total);
  ~Progress();
  void advance(std::uint64_t n = 1) {
    done_ += n;
    if (enabled_ && (done_ & 0xfff) == 0) draw(false);
  }
  void finish();  // final redraw and newline

 private:
  void draw(bool force);
  bool enabled_;
  bool finished_ = false;
  std::string label_;
  std::uint64_t total_;
  std::uint64_t done_ = 0;
  std::chrono::steady_clock::time_point last_{};
};

}  // namespace encore::exporter
