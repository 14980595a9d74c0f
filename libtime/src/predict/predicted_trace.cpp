#include "encore/predict/predicted_trace.hpp"

#include <system_error>

#include <fmt/format.h>

#include "encore/error.hpp"
#include "encore/trace_dir.hpp"

namespace encore::predict {

PredictedTrace::PredictedTrace(std::optional<std::filesystem::path> out_dir, std::uint32_t nprocs)
    : dir_(std::move(out_dir)), totals_(nprocs) {
  if (!dir_) return;
  std::error_code ec;
  std::filesystem::create_directories(*dir_, ec);
  if (ec) throw Error(fmt::format("{}: cannot create directory: {}", dir_->string(), ec.message()));
  const TraceDir d(*dir_);
  RankWriterOptions options;
  options.chunk_bytes = 256u << 10;  // many ranks open at once: keep each one's buffer small
  for (std::uint32_t r = 0; r < nprocs; ++r)
    writers_.push_back(
        std::make_unique<RankTraceWriter>(d.events_path(r), d.payload_path(r), r, options));
}

void PredictedTrace::write(std::uint32_t rank, const Event& ev, std::int64_t start_ns,
                           std::int64_t end_ns) {
  if (ev.payloads.empty() && ev.signatures.empty() && ev.stall_ns == 0 && ev.first_read_ns == 0) {
    // Nothing to drop: the event's own body is the output's, so no copy of the Event.
    body_.clear();
    encode_event_body(ev, body_);
    writers_[rank]->write_body(ev.thread, static_cast<std::uint64_t>(start_ns),
                               static_cast<std::uint64_t>(end_ns), 0, body_);
    return;
  }
  out_ = ev;
  out_.start_ns = static_cast<std::uint64_t>(start_ns);
  out_.end_ns = static_cast<std::uint64_t>(end_ns);
  out_.overhead_ns = 0;
  out_.raw_start_ns = out_.start_ns;
  out_.stall_ns = 0;
  out_.first_read_ns = 0;  // the capture's measure, inside the predicted duration
  out_.payloads.clear();
  out_.signatures.clear();
  writers_[rank]->write(out_);
}

void PredictedTrace::finish(const Manifest& capture, const nlohmann::json& prediction) {
  if (!dir_) return;
  Manifest m = capture;
  m.kind = TraceKind::predicted;
  m.replay_of.reset();
  m.options["prediction"] = prediction;
  for (std::uint32_t r = 0; r < writers_.size(); ++r) {
    writers_[r]->close();
    if (r < m.ranks.size()) {
      RankInfo& info = m.ranks[r];
      info.clock_offset_ns = 0;  // already applied
      info.sync_init.reset();
      info.sync_end.reset();
      if (info.raw.is_object()) info.raw.erase("clock_offset_end_ns");
      info.status = RankStatus::complete;
      info.events = writers_[r]->events();
      info.payload_bytes = 0;
    }
  }
  save_manifest(m, TraceDir(*dir_).manifest_path());
}

}  // namespace encore::predict
