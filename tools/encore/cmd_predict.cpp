// encore predict: merge replayed compute with logged or modelled communication into a
// predicted full-run profile (see doc/user-guide.md, "Predicting a full run").
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common.hpp"
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "encore/error.hpp"
#include "encore/predict/clock_offsets.hpp"
#include "encore/predict/fit.hpp"
#include "encore/predict/logged_model.hpp"
#include "encore/predict/loggps_engine.hpp"
#include "encore/predict/predicted_trace.hpp"
#include "encore/predict/stall_spread.hpp"
#include "encore/predict/trace_feed.hpp"

namespace encore::tool {
namespace {

struct PredictOptions {
  std::string trace;
  std::vector<std::string> replay;
  std::string out;
  std::string model = "loggps";
  std::string params;
  std::string infer = "aligned";
  std::string stall_time = "auto";
  std::string fit_events;  // per rank, or "all"; default fit_events_per_rank
  bool json = false;
};

// The program's own span: from the earliest return of MPI_Init(_thread) to the latest call of
// MPI_Finalize over all ranks, recorded and predicted. It leaves out process start-up, MPI_Init
// and MPI_Finalize, which no model changes, so it is what a program's own timer around its work
// would read (and what bench/predict_accuracy.py compares with plain runs).
class ProgramSpan {
 public:
  explicit ProgramSpan(const predict::ClockOffsets& clocks) : clocks_(clocks) {}
  void on_event(std::uint32_t rank, const Event& ev, std::int64_t start, std::int64_t end) {
    // Each time with the offset at that time, as the exporters do.
    const auto shifted = [&](std::uint64_t ns) {
      const auto t = static_cast<std::int64_t>(ns);
      return t + clocks_.at(rank, t);
    };
    if (ev.function == fn::Init || ev.function == fn::Init_thread) {
      recorded_.begin(shifted(ev.end_ns));
      predicted_.begin(end);
    } else if (ev.function == fn::Finalize) {
      recorded_.end(shifted(ev.start_ns));
      predicted_.end(start);
    }
  }
  // Seconds, or nullopt when some rank's trace lacks MPI_Init or MPI_Finalize (a cut trace).
  std::optional<double> recorded_s(std::uint32_t nprocs) const { return recorded_.seconds(nprocs); }
  std::optional<double> predicted_s(std::uint32_t nprocs) const {
    return predicted_.seconds(nprocs);
  }

 private:
  struct Bounds {
    std::int64_t first = 0, last = 0;
    std::uint32_t begins = 0, ends = 0;
    void begin(std::int64_t t) { first = begins++ == 0 ? t : std::min(first, t); }
    void end(std::int64_t t) { last = ends++ == 0 ? t : std::max(last, t); }
    std::optional<double> seconds(std::uint32_t nprocs) const {
      if (begins != nprocs || ends != nprocs || last < first) return std::nullopt;
      return static_cast<double>(last - first) * 1e-9;
    }
  };
  const predict::ClockOffsets& clocks_;
  Bounds recorded_, predicted_;
};

// Forwards to the real sink, drawing a progress line on a terminal and following the span.
class ProgressSink : public predict::PredictSink {
 public:
  ProgressSink(predict::PredictedTrace& inner, ProgramSpan& span, std::uint64_t total, bool show)
      : inner_(inner), span_(span), total_(total), show_(show) {}
  void on_event(std::uint32_t rank, const Event& ev, std::int64_t compute, std::int64_t start,
                std::int64_t end, std::int64_t wait) override {
    inner_.on_event(rank, ev, compute, start, end, wait);
    span_.on_event(rank, ev, start, end);
    if (show_ && (++done_ & 0xFFFFF) == 0 && total_ != 0)
      std::fprintf(stderr, "\rpredict: %llu of %llu events (%.0f%%)",
                   static_cast<unsigned long long>(done_), static_cast<unsigned long long>(total_),
                   100.0 * static_cast<double>(done_) / static_cast<double>(total_));
  }
  void end() const {
    if (show_ && done_ >= 0x100000) std::fprintf(stderr, "\r%60s\r", "");
  }

 private:
  predict::PredictedTrace& inner_;  // final: its totals are inlined here
  ProgramSpan& span_;
  std::uint64_t total_, done_ = 0;
  bool show_;
};

double seconds(std::int64_t ns) { return static_cast<double>(ns) * 1e-9; }

nlohmann::json totals_json(const predict::RankTotals& t) {
  return {{"compute_s", seconds(t.compute_ns)},
          {"communication_s", seconds(t.comm_ns)},
          {"wait_s", seconds(t.wait_ns)},
          {"end_s", seconds(t.end_ns)},
          {"events", t.events}};
}

// A replayed rank's stalls: measured where (segments, the replay's own calls), and what the
// prediction gave its segments instead of their measured time.
nlohmann::json stall_json(const predict::StallSpread& s) {
  return {
      {"mode", std::string(predict::to_string(s.mode))},
      {"measured", s.measured},
      {"segments_s", seconds(static_cast<std::int64_t>(s.segments_ns))},
      {"calls_s", seconds(static_cast<std::int64_t>(s.calls_ns))},
      {"cpu_s", seconds(static_cast<std::int64_t>(s.ran_ns))},
      {"factor", s.factor},
      {"measured_factor", s.measured_factor},
      {"cpu_quota", s.cpu_quota},
      {"compute_measured_s", seconds(static_cast<std::int64_t>(s.compute_ns))},
      {"compute_given_s", seconds(static_cast<std::int64_t>(s.spread_compute_ns()))},
      {"spread_s",
       s.active() ? seconds(static_cast<std::int64_t>(s.spread_compute_ns() - s.cpu_ns())) : 0.0}};
}

std::string pct(double predicted, double recorded) {
  if (recorded <= 0) return "";
  return fmt::format("{:+.2f} %", 100.0 * (predicted - recorded) / recorded);
}

int predict_main(const PredictOptions& o) {
  if (o.model != "logged" && o.model != "loggps" && o.model != "seed")
    throw ExitError(kExitUsage, "--model: expected loggps, logged or seed, got '" + o.model + "'");
  if (!o.out.empty()) {
    // Checked before anything is read: writing into a directory that holds files could
    // overwrite the capture being read, a replay profile or an earlier prediction.
    std::error_code ec;
    const auto st = std::filesystem::status(o.out, ec);
    if (std::filesystem::exists(st) &&
        (!std::filesystem::is_directory(st) || !std::filesystem::is_empty(o.out, ec)))
      throw ExitError(kExitUsage,
                      "-o " + o.out + ": exists and is not an empty directory; give a new one");
  }
  const Trace t = open_trace(o.trace);
  if (t.manifest.kind != TraceKind::capture)
    throw ExitError(kExitUnreadable, o.trace + ": a " + std::string(to_string(t.manifest.kind)) +
                                         " trace; predict starts from a capture");
  const std::uint32_t n = t.manifest.nprocs;
  for (std::uint32_t r = 0; r < n; ++r) require_rank_files(t, r);

  std::vector<predict::ReplayProfile> profiles;
  std::map<std::uint32_t, std::filesystem::path> profile_of;
  for (const std::string& dir : o.replay) {
    predict::ReplayProfile p;
    try {
      p = predict::open_profile(dir, n, t.manifest.start_time_unix_ns);
    } catch (const Error& e) {
      throw ExitError(kExitUnreadable, e.what());
    }
    if (!profile_of.emplace(p.rank, TraceDir(dir).events_path(p.rank)).second)
      throw ExitError(kExitUsage, fmt::format("--replay: two profiles of rank {} ({} and another)",
                                              p.rank, dir));
    profiles.push_back(p);
  }

  predict::LogGPSParams params;
  std::optional<predict::FitReport> fit;
  if (!o.params.empty()) {
    try {
      params = predict::load_params(o.params);
    } catch (const Error& e) {
      throw ExitError(kExitUsage, e.what());
    }
  } else {
    std::uint64_t per_rank = predict::fit_events_per_rank(n);
    if (o.fit_events == "all") {
      per_rank = std::numeric_limits<std::uint64_t>::max();
    } else if (!o.fit_events.empty()) {
      const char* end = o.fit_events.data() + o.fit_events.size();
      const auto [at, ec] = std::from_chars(o.fit_events.data(), end, per_rank);
      if (ec != std::errc() || at != end || per_rank == 0)
        throw ExitError(kExitUsage, "--fit-events: expected a positive number or all, got '" +
                                        o.fit_events + "'");
    }
    fit = predict::fit_params(t.dir, t.manifest, per_rank);
    params = fit->params;
  }

  const auto stall_time = predict::parse_stall_time(o.stall_time);
  if (!stall_time)
    throw ExitError(kExitUsage, "--stall-time: expected auto, spread, keep or drop, got '" +
                                    o.stall_time + "'");
  predict::ComputeScale scale = predict::measure_scale(t.dir, profiles, *stall_time);
  if (o.infer != "aligned") scale.source_rank.reset();
  std::vector<std::unique_ptr<predict::RankFeed>> feeds;
  std::vector<predict::TraceRankFeed*> rank_feeds;
  std::uint64_t total_events = 0;
  const predict::ClockOffsets clocks(t.manifest);
  for (std::uint32_t r = 0; r < n; ++r) {
    const auto it = profile_of.find(r);
    auto f = std::make_unique<predict::TraceRankFeed>(
        t.dir, r, &clocks, n,
        it == profile_of.end() ? std::nullopt : std::optional<std::filesystem::path>(it->second),
        &scale, &params);
    rank_feeds.push_back(f.get());
    feeds.push_back(std::move(f));
    if (r < t.manifest.ranks.size()) total_events += t.manifest.ranks[r].events;
  }
  std::int64_t base = 0;
  bool any = false;
  for (auto* f : rank_feeds) {
    if (f->empty()) continue;
    base = any ? std::min(base, f->first_start()) : f->first_start();
    any = true;
  }
  for (auto* f : rank_feeds) f->set_base(base);

  predict::PredictedTrace out(
      o.out.empty() ? std::nullopt : std::optional<std::filesystem::path>(o.out), n);
  ProgramSpan span(clocks);
  ProgressSink progress(out, span, total_events, isatty(STDERR_FILENO) != 0);
  predict::EngineStats stats;
  std::uint64_t released = 0;
  try {
    if (o.model == "loggps") {
      stats = predict::run_loggps(feeds, params, progress);
    } else if (o.model == "seed") {
      stats = predict::run_logged(feeds, params, progress);
    } else {
      const predict::LoggedStats ls = predict::run_compensated(feeds, params, clocks, progress);
      stats = ls;
      released = ls.released;
    }
  } catch (const Error& e) {
    progress.end();
    // A rank whose stream ended early (damage, a crash) is often why the others wait forever.
    std::string why = e.what();
    for (std::uint32_t r = 0; r < n; ++r)
      if (auto d = rank_feeds[r]->damage(); !d.empty()) why += "; the trace is damaged: " + d;
    throw ExitError(kExitTraceProblem, why);
  }
  progress.end();

  nlohmann::json doc;
  doc["trace"] = o.trace;
  doc["nprocs"] = n;
  doc["model"] = o.model;
  doc["params"] = predict::to_json(params);
  if (fit) doc["fit"] = predict::to_json(*fit);
  doc["compute_scale"] = {{"overall", scale.overall},
                          {"replayed_ranks", scale.replayed_ranks},
                          {"call_sites", scale.by_callsite.size()}};
  if (scale.source_rank) doc["compute_scale"]["source_rank"] = *scale.source_rank;
  std::int64_t predicted_end = 0, recorded_end = 0;
  auto& ranks = doc["ranks"] = nlohmann::json::array();
  std::vector<std::string> problems;
  for (std::uint32_t r = 0; r < n; ++r) {
    const auto& p = out.totals()[r];
    const auto& rec = rank_feeds[r]->recorded();
    predicted_end = std::max(predicted_end, p.end_ns);
    recorded_end = std::max(recorded_end, rec.end_ns);
    nlohmann::json j = {{"rank", r},
                        {"compute", rank_feeds[r]->replayed() ? "replayed" : "inferred"},
                        {"recorded", totals_json(rec)},
                        {"predicted", totals_json(p)}};
    if (const auto it = profile_of.find(r); it != profile_of.end())
      j["profile"] = it->second.parent_path().string();
    if (const auto it = scale.stalls.find(r); it != scale.stalls.end())
      j["stall"] = stall_json(it->second);
    else if (scale.source_rank)
      j["aligned_segments"] = rank_feeds[r]->aligned_segments();
    ranks.push_back(j);
    if (auto pr = rank_feeds[r]->problem(); !pr.empty()) problems.push_back(pr);
  }
  doc["predicted_total_s"] = seconds(predicted_end);
  doc["recorded_total_s"] = seconds(recorded_end);
  const auto span_json = [](std::optional<double> v) {
    return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
  };
  doc["predicted_program_s"] = span_json(span.predicted_s(n));
  doc["recorded_program_s"] = span_json(span.recorded_s(n));
  doc["engine"] = {{"events", stats.events},
                   {"messages", stats.messages},
                   {"collectives", stats.collectives},
                   {"max_in_flight", stats.max_in_flight},
                   {"polls_released", stats.polls_released}};
  if (o.model == "logged") doc["engine"]["released"] = released;
  if (!o.out.empty()) doc["output"] = o.out;
  try {
    out.finish(t.manifest, {{"model", o.model},
                            {"params", predict::to_json(params)},
                            {"capture", o.trace},
                            {"profiles", o.replay}});
  } catch (const Error& e) {
    throw ExitError(kExitUnreadable, e.what());
  }

  if (o.json) {
    fmt::print("{}\n", doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
  } else {
    fmt::print("prediction of {} ({} ranks), model {}\n", o.trace, n, o.model);
    fmt::print(
        "  parameters: L {:.0f} ns, o {:.0f} ns, g {:.0f} ns, G {:.4f} ns/B, S {} B, gamma {:.4f} "
        "ns/B{} ({})\n",
        params.L, params.o, params.g, params.G, params.S, params.gamma,
        params.gamma_nonblocking
            ? fmt::format(" (nonblocking {:.4f} ns/B)", *params.gamma_nonblocking)
            : std::string(),
        params.source);
    if (fit) fmt::print("  fit: {}\n", predict::describe(*fit));
    std::string measured, inferred;
    for (std::uint32_t r = 0; r < n; ++r)
      (rank_feeds[r]->replayed() ? measured : inferred) += fmt::format(
          "{}{}", (rank_feeds[r]->replayed() ? measured : inferred).empty() ? "" : " ", r);
    fmt::print("  compute measured by replay: ranks {}\n", measured.empty() ? "none" : measured);
    if (inferred.empty())
      fmt::print("  compute inferred: ranks none (every rank replayed)\n");
    else
      fmt::print(
          "  compute inferred: ranks {} ({})\n", inferred,
          scale.replayed_ranks == 0
              ? std::string("as captured: no replay profile given")
              : fmt::format("{}x{:.4f} of the capture overall, per call site for {} sites",
                            scale.source_rank ? fmt::format("rank {}'s replayed segments where the "
                                                            "calls line up, else ",
                                                            *scale.source_rank)
                                              : std::string(),
                            scale.overall, scale.by_callsite.size()));
    for (const auto& [r, st] : scale.stalls) {
      if (!st.measured) continue;
      const auto ns = [](std::uint64_t v) { return format_duration(v); };
      std::string what = " (kept where measured)";
      if (st.active() && st.mode == predict::StallTime::drop)
        what = fmt::format(
            ": left out of its compute, the replay having run without a CPU "
            "quota (compute {} -> {})",
            ns(st.compute_ns), ns(st.spread_compute_ns()));
      else if (st.active())
        what = fmt::format(
            ": {} spread over its segments by running time (x{:.3f}{}; compute {} -> "
            "{})",
            ns(st.spread_compute_ns() - st.cpu_ns()), st.factor,
            st.by_quota() ? fmt::format(", 1 / its CPU quota {:g}, where it measured x{:.3f}",
                                        st.cpu_quota, st.measured_factor)
                          : std::string(),
            ns(st.compute_ns), ns(st.spread_compute_ns()));
      fmt::print("  rank {} stalled {} in its compute and {} in the replay's calls{}\n", r,
                 ns(st.segments_ns), ns(st.calls_ns), what);
    }
    fmt::print("  predicted total: {:.6f} s (recorded {:.6f} s, {})\n", seconds(predicted_end),
               seconds(recorded_end), pct(seconds(predicted_end), seconds(recorded_end)));
    if (const auto ps = span.predicted_s(n), rs = span.recorded_s(n); ps && rs)
      fmt::print("  MPI_Init to MPI_Finalize: {:.6f} s (recorded {:.6f} s, {})\n", *ps, *rs,
                 pct(*ps, *rs));
    fmt::print("  {:>5} {:>8}  {:>23}  {:>23}  {:>23}  {:>23}\n", "rank", "compute",
               "compute rec -> pred", "comm rec -> pred", "wait rec -> pred", "end rec -> pred");
    for (std::uint32_t r = 0; r < n; ++r) {
      const auto& p = out.totals()[r];
      const auto& rec = rank_feeds[r]->recorded();
      const auto cell = [](std::int64_t a, std::int64_t b) {
        return fmt::format("{:>10} -> {:<10}", format_duration(static_cast<std::uint64_t>(a)),
                           format_duration(static_cast<std::uint64_t>(b)));
      };
      fmt::print("  {:>5} {:>8}  {}  {}  {}  {}\n", r,
                 rank_feeds[r]->replayed() ? "replayed" : "inferred",
                 cell(rec.compute_ns, p.compute_ns), cell(rec.comm_ns, p.comm_ns),
                 cell(rec.wait_ns, p.wait_ns), cell(rec.end_ns, p.end_ns));
    }
    if (released != 0)
      fmt::print(
          "  {} calls kept their recorded duration: a rank they wait for reaches them only "
          "later in the model's order\n",
          released);
    if (!o.out.empty()) fmt::print("  predicted trace: {}\n", o.out);
  }
  for (const auto& pr : problems) print_error(pr + " (predicted from the events before it)");
  return problems.empty() ? kExitOk : kExitTraceProblem;
}

}  // namespace

Subcommand add_predict(CLI::App& parent) {
  auto o = std::make_shared<PredictOptions>();
  CLI::App* app = parent.add_subcommand(
      "predict", "Predict the full run from a capture and replay profiles of some of its ranks.");
  app->add_option("TRACE", o->trace, "Capture trace directory")->required();
  app->add_option("--replay", o->replay,
                  "Replay profile directories (encore replay -o); ranks without one are inferred")
      ->expected(1, -1);
  app->add_option("-o,--output", o->out, "Write the predicted trace (kind \"predicted\") here");
  app->add_option(
         "--model", o->model,
         "loggps (simulated), logged (recorded durations, waits re-derived from the peers' "
         "corrected times) or seed (recorded durations as they are)")
      ->capture_default_str();
  app->add_option("--params", o->params,
                  "LogGPS parameters as JSON {L, o, g, G, S} (ns, ns/byte, bytes); default: "
                  "fitted from the capture");
  app->add_option("--fit-events", o->fit_events,
                  "events of each rank the parameter fit takes send/receive pairs from: a "
                  "number, or all (its memory then grows with the messages in the trace); "
                  "default: the first 50000 of each rank, 1 M in all, at least 1000 a rank "
                  "(sends' durations and collectives come from the whole trace)");
  app->add_option("--infer", o->infer,
                  "compute of ranks without a profile: aligned (the lowest replayed rank's "
                  "replayed segments where the calls line up and the work matches, else ratio) "
                  "or ratio (their captured compute times the replayed ranks' replayed / "
                  "captured)")
      ->check(CLI::IsMember({"ratio", "aligned"}))
      ->capture_default_str();
  app->add_option(
         "--stall-time", o->stall_time,
         "time a replayed rank's thread was not running (a CPU quota's throttling, "
         "preemption), as its profile measured it: spread (each compute segment gets "
         "its time less its stall times the rank's measured slow-down), keep (each segment as "
         "measured), drop (each segment less its stall) or auto (drop where the replay ran "
         "without a CPU quota, else spread)")
      ->check(CLI::IsMember({"auto", "spread", "keep", "drop"}))
      ->capture_default_str();
  app->add_flag("--json", o->json, "Print the summary as one JSON object");
  app->footer(std::string(kExitCodesFooter) +
              " Exit 1 also when the loggps model cannot order the calls.");
  return {app, [o] { return predict_main(*o); }};
}

}  // namespace encore::tool
