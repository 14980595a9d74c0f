#include "segment_share.hpp"

#include <algorithm>
#include <cmath>

namespace encore::predict {

void SegmentShare::add(std::int64_t rank_ns, std::int64_t source_ns) {
  if (source_ns <= 0) return;
  if (seen_++ % stride_ != 0) return;
  kept_.push_back(static_cast<double>(std::max<std::int64_t>(rank_ns, 0)) /
                  static_cast<double>(source_ns));
  if (kept_.size() < kMaxKept) return;
  // Keep the pairs at even positions (multiples of the doubled stride).
  std::size_t out = 0;
  for (std::size_t i = 0; i < kept_.size(); i += 2) kept_[out++] = kept_[i];
  kept_.resize(out);
  stride_ *= 2;
}

std::optional<double> SegmentShare::median() const {
  if (kept_.empty()) return std::nullopt;
  std::vector<double> v = kept_;
  const std::size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  if (v.size() % 2 == 1) return v[mid];
  const double upper = v[mid];
  const double lower = *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid));
  return std::sqrt(lower * upper);
}

}  // namespace encore::predict
