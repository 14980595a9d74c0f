// Hand-made MPI calls for the prediction tests: events built by role, fed to the models from
// memory, and a sink that keeps what they predicted.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "encore/event.hpp"
#include "encore/event_format.hpp"
#include "encore/manifest.hpp"
#include "encore/predict/feed.hpp"
#include "encore/predict/loggps_params.hpp"

namespace encore::testing {

inline std::uint64_t world_id() {
  const auto h = predefined_handles(HandleKind::comm);
  for (std::size_t i = 0; i < h.size(); ++i)
    if (std::string_view(h[i].name) == "MPI_COMM_WORLD")
      return event_format::kFirstPredefinedId + i;
  return 0;
}

constexpr std::int64_t kAnySource = -2;  // MPICH's MPI_ANY_SOURCE
constexpr std::int64_t kAnyTag = -1;     // MPICH's MPI_ANY_TAG
constexpr std::int64_t kProcNull = -1;   // MPICH's MPI_PROC_NULL

// An event of function `f` with every argument present and zero; `dur` ns long.
inline Event call(std::uint16_t f, std::uint64_t dur = 50) {
  Event e;
  e.function = f;
  e.args.resize(function_table()[f].params.size());
  for (auto& a : e.args) a.present = true;
  for (std::size_t i = 0; i < e.args.size(); ++i)
    if (function_table()[f].params[i].role == Role::comm)
      e.args[i].scalar = static_cast<std::int64_t>(world_id());
  e.start_ns = 0;
  e.end_ns = dur;
  return e;
}

inline ArgValue& role_arg(Event& e, Role role, int nth = 0) {
  const auto params = function_table()[e.function].params;
  for (std::size_t i = 0; i < params.size(); ++i)
    if (params[i].role == role && nth-- == 0) return e.args[i];
  throw std::logic_error("no such role");
}

// The logged model's small round parameters (L 1000, o 100, G 1, S 1000 ns and bytes).
inline predict::LogGPSParams round_params() {
  predict::LogGPSParams p;
  p.L = 1000;
  p.o = 100;
  p.G = 1;
  p.S = 1000;
  return p;
}

// `e` as recorded: uncorrected start `raw` on its rank's clock, `dur` ns long.
inline Event recorded_at(Event e, std::uint64_t raw, std::uint64_t dur) {
  e.raw_start_ns = raw;
  e.start_ns = raw;
  e.end_ns = raw + dur;
  return e;
}

inline Event send(std::uint16_t f, std::int64_t dest, std::int64_t tag, std::uint64_t bytes) {
  Event e = call(f);
  role_arg(e, Role::peer).scalar = dest;
  role_arg(e, Role::tag).scalar = tag;
  e.send_hashes.push_back({0, bytes});
  return e;
}

// A receive as recorded: `source` may be a wildcard, the status holds what arrived.
inline Event recv(std::uint16_t f, std::int64_t source, std::int64_t tag, std::int64_t got_source,
                  std::uint64_t bytes) {
  Event e = call(f);
  role_arg(e, Role::peer).scalar = source;
  role_arg(e, Role::tag).scalar = tag;
  if (f == fn::Recv) role_arg(e, Role::status_out).statuses = {{0, got_source, tag, bytes, 0}};
  return e;
}

inline Event waitall(const std::vector<std::uint64_t>& request_events) {
  Event e = call(fn::Waitall);
  auto& reqs = role_arg(e, Role::request_array).requests;
  for (auto i : request_events) reqs.push_back({false, 0, i});
  role_arg(e, Role::count).scalar = static_cast<std::int64_t>(request_events.size());
  return e;
}

inline Event coll(std::uint16_t f, std::uint64_t bytes) {
  Event e = call(f);
  if (bytes) e.send_hashes.push_back({0, bytes});
  return e;
}

struct Step {
  Event ev;
  std::int64_t compute = 0;
};

class VectorFeed : public predict::RankFeed {
 public:
  explicit VectorFeed(std::vector<Step> steps) : steps_(std::move(steps)) {}
  bool next(Event& ev, std::int64_t& compute) override {
    if (i_ == steps_.size()) return false;
    ev = steps_[i_].ev;
    ev.index = i_;
    compute = steps_[i_].compute;
    ++i_;
    return true;
  }

 private:
  std::vector<Step> steps_;
  std::size_t i_ = 0;
};

struct Predicted {
  std::int64_t start, end, wait;
};

class KeepSink : public predict::PredictSink {
 public:
  void on_event(std::uint32_t rank, const Event&, std::int64_t, std::int64_t start,
                std::int64_t end, std::int64_t wait) override {
    calls[rank].push_back({start, end, wait});
  }
  std::map<std::uint32_t, std::vector<Predicted>> calls;
};

inline std::vector<std::unique_ptr<predict::RankFeed>> feeds(std::vector<std::vector<Step>> ranks) {
  std::vector<std::unique_ptr<predict::RankFeed>> out;
  out.reserve(ranks.size());
  for (auto& r : ranks) out.push_back(std::make_unique<VectorFeed>(std::move(r)));
  return out;
}

// A manifest for hand-made traces: `ranks` complete, this build's function table; a replay
// profile names rank ranks[0] of "capture".
inline Manifest manifest(TraceKind kind, std::vector<std::uint32_t> ranks,
                         std::uint32_t nprocs = 2) {
  Manifest m;
  m.kind = kind;
  m.nprocs = nprocs;
  m.function_table.hash = std::string(kFunctionTableHash);
  for (const auto& f : function_table()) m.function_table.functions.push_back(f.name);
  for (auto r : ranks) {
    RankInfo info;
    info.rank = r;
    info.status = RankStatus::complete;
    m.ranks.push_back(info);
  }
  if (kind == TraceKind::replay) m.replay_of = ReplayOf{"capture", ranks.at(0)};
  return m;
}

}  // namespace encore::testing
