#include "progress.hpp"

#include <algorithm>
#include <cstdio>

namespace encore::exporter {

Progress::Progress(bool enabled, std::string label, std::uint64_t total)
    : enabled_(enabled), label_(std::move(label)), total_(total) {}

Progress::~Progress() { finish(); }

void Progress::draw(bool force) {
  const auto now = std::chrono::steady_clock::now();
  if (!force && now - last_ < std::chrono::milliseconds(100)) return;
  last_ = now;
  if (total_ == 0) {
    std::fprintf(stderr, "\r%s: %llu events", label_.c_str(),
                 static_cast<unsigned long long>(done_));
  } else {
    const double f = std::min(1.0, static_cast<double>(done_) / static_cast<double>(total_));
    constexpr int kWidth = 30;
    const int filled = static_cast<int>(f * kWidth);
    std::string bar(static_cast<std::size_t>(filled), '#');
    bar.resize(kWidth, '.');
    std::fprintf(stderr, "\r%s [%s] %3d%% %llu/%llu events", label_.c_str(), bar.c_str(),
                 static_cast<int>(f * 100), static_cast<unsigned long long>(done_),
                 static_cast<unsigned long long>(total_));
  }
  std::fflush(stderr);
}

void Progress::finish() {
  if (!enabled_ || finished_) return;
  finished_ = true;
  draw(true);
  std::fputc('\n', stderr);
}

}  // namespace encore::exporter
