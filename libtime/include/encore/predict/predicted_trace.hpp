// The models' output: per-rank totals (compute + communication + wait = end), and optionally
// a predicted trace (kind "predicted"): each rank's calls with their predicted times, as any
// Encore tool reads them. Received bytes are not copied (the payload streams stay empty): a
// predicted trace is a timeline, not something to replay.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "encore/manifest.hpp"
#include "encore/predict/feed.hpp"
#include "encore/predict/trace_feed.hpp"
#include "encore/rank_trace_writer.hpp"

namespace encore::predict {

// Final, with the totals inline: a sink that forwards to it (encore predict's progress line)
// adds them at no call's cost, and without an output directory that is all it does.
class PredictedTrace final : public PredictSink {
 public:
  // Without `out_dir` only the totals are kept. Throws Error if the directory cannot be made.
  PredictedTrace(std::optional<std::filesystem::path> out_dir, std::uint32_t nprocs);
  void on_event(std::uint32_t rank, const Event& ev, std::int64_t compute_ns, std::int64_t start_ns,
                std::int64_t end_ns, std::int64_t wait_ns) override {
    RankTotals& t = totals_[rank];
    t.compute_ns += compute_ns;
    t.wait_ns += wait_ns;
    t.comm_ns += end_ns - start_ns - wait_ns;
    t.end_ns = end_ns;
    ++t.events;
    if (!writers_.empty()) write(rank, ev, start_ns, end_ns);
  }
  const std::vector<RankTotals>& totals() const { return totals_; }
  // Closes the streams and writes the manifest: the capture's, marked "predicted", with
  // `prediction` (model, parameters, sources) under options.prediction.
  void finish(const Manifest& capture, const nlohmann::json& prediction);

 private:
  void write(std::uint32_t rank, const Event& ev, std::int64_t start_ns, std::int64_t end_ns);
  std::optional<std::filesystem::path> dir_;
  std::vector<std::unique_ptr<RankTraceWriter>> writers_;
  std::vector<RankTotals> totals_;
  Event out_;                    // an event with something to drop, copied
  std::vector<std::byte> body_;  // an event with nothing to drop, encoded as it is
};

}  // namespace encore::predict
