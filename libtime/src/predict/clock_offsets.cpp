#include "encore/predict/clock_offsets.hpp"

namespace encore::predict {

ClockOffsets::ClockOffsets(const std::vector<std::int64_t>& constant) {
  ranks_.reserve(constant.size());
  for (const std::int64_t c : constant) ranks_.push_back({c, nullptr});
}

ClockOffsets::ClockOffsets(const Manifest& manifest) {
  ranks_.resize(manifest.nprocs);
  for (const RankInfo& r : manifest.ranks) {
    if (r.rank >= ranks_.size()) continue;
    Entry& e = ranks_[r.rank];
    // Where nothing drifts, offset_at gives the same value at every time: kept as a constant,
    // so that a trace without both estimates costs the models nothing per event.
    if (r.sync_init && r.sync_end && r.sync_end->offset_ns != r.sync_init->offset_ns &&
        r.sync_end->at_ns > r.sync_init->at_ns)
      e.drifting = &r;
    else
      e.constant = r.offset_at(0);
  }
}

}  // namespace encore::predict
