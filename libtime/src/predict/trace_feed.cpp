#include "encore/predict/trace_feed.hpp"

#include <algorithm>

#include "aligned_compute.hpp"
#include "call_class.hpp"
#include <fmt/format.h>

#include "encore/error.hpp"
#include "encore/json_file.hpp"
#include "encore/manifest.hpp"
#include "encore/predict/loggps_engine.hpp"

namespace encore::predict {
namespace {

void check_same_call(const Event& captured, const Event& replayed, const std::string& where) {
  if (captured.function == replayed.function && captured.thread == replayed.thread &&
      captured.index == replayed.index)
    return;
  throw Error(
      fmt::format("{}: event #{} of thread {} is {}, the capture has {} (thread {} #{}): "
                  "not a replay of this capture",
                  where, replayed.index, replayed.thread, replayed.info().name,
                  captured.info().name, captured.thread, captured.index));
}

// The overall ratio leaves out captured segments shorter than this (unless every segment is):
// in those the per-call corrections outweigh the program's work. A wait loop's turns between
// two polls are a few ns of the program's, beside the capture's residue of its own time and the
// replay's clock read taken out, so a master that polls millions of times measured x0.07 of its
// capture, which scaled a worker's tiles by as much.
constexpr std::int64_t kRatioMinSegmentNs = 1000;

// Why a replay profile gave no event where the capture has `captured`: its damage, if that
// is what stopped it (the first undecodable event, not the first one missing), else its end.
std::string profile_ends(const RankEventReader& profile, const Event& captured) {
  if (!profile.problem().empty()) return profile.problem();
  return fmt::format("{}: ends at event #{} before the capture does", profile.file().path(),
                     captured.index);
}

// Below this a gap (never negative) converts to double and back exactly.
constexpr std::int64_t kExactDouble = std::int64_t{1} << 52;

std::int64_t gap_of(const Event& ev, std::int64_t& prev_end) {
  const std::int64_t start = static_cast<std::int64_t>(ev.start_ns);
  const std::int64_t g = std::max<std::int64_t>(start - prev_end, 0);
  prev_end = static_cast<std::int64_t>(ev.end_ns);
  return g;
}

}  // namespace

ReplayProfile open_profile(const std::filesystem::path& dir, std::uint32_t nprocs,
                           std::int64_t recording_start_ns) {
  // Only the keys of the profile contract are read (kind, nprocs, replay_of.rank): a profile
  // lists one rank of an N-rank run, which the capture manifest's validation would refuse.
  const TraceDir d(dir);
  const std::string where = d.manifest_path().string();
  std::error_code ec;
  if (!std::filesystem::exists(d.manifest_path(), ec))
    throw Error(fmt::format("{}: cannot open (not a replay profile directory?)", where));
  const nlohmann::json doc = read_json_file(d.manifest_path());
  const auto kind = doc.is_object() ? doc.value("kind", nlohmann::json()) : nlohmann::json();
  if (kind != "replay" || !doc.contains("replay_of") || !doc["replay_of"].is_object())
    throw Error(
        fmt::format("{}: kind is {}, expected a replay profile (kind \"replay\" with "
                    "replay_of)",
                    where, kind.dump()));
  const auto& n = doc.value("nprocs", nlohmann::json());
  if (!n.is_number_unsigned() || n.get<std::uint64_t>() != nprocs)
    throw Error(fmt::format("{}: nprocs {} but the capture has {} ranks", where, n.dump(), nprocs));
  const auto& r = doc["replay_of"].value("rank", nlohmann::json());
  if (!r.is_number_unsigned() || r.get<std::uint64_t>() >= nprocs)
    throw Error(fmt::format("{}: replay_of.rank {} is not a rank of the capture", where, r.dump()));
  // Another recording of the same program has the same calls but other compute and messages.
  const auto& of = doc["replay_of"];
  const auto& began = of.value("recording_start_ns", nlohmann::json());
  if (recording_start_ns != 0 && began.is_number_integer() &&
      began.get<std::int64_t>() != recording_start_ns) {
    // Only named in the message: any other type is "?", not a type_error.
    const auto trace = of.find("trace");
    throw Error(
        fmt::format("{}: replays the recording started at {} ({}), not this one (started "
                    "at {})",
                    where, iso_utc(began.get<std::int64_t>()),
                    trace != of.end() && trace->is_string() ? trace->get<std::string>() : "?",
                    iso_utc(recording_start_ns)));
  }
  ReplayProfile p{dir, static_cast<std::uint32_t>(r.get<std::uint64_t>()), {}, {}, {}, {}};
  // Optional totals (absent from a replay that was killed, or older than the key).
  const auto number = [&](const nlohmann::json& obj, const char* key,
                          const std::string& path) -> std::optional<std::uint64_t> {
    if (!obj.is_object() || !obj.contains(key)) return std::nullopt;
    if (!obj[key].is_number_unsigned())
      throw Error(fmt::format("{}: {}: expected a non-negative integer, got {}", where, path,
                              obj[key].dump()));
    return obj[key].get<std::uint64_t>();
  };
  if (doc.contains("replay")) {
    const auto& rep = doc["replay"];
    p.overhead_ns = number(rep, "replay_overhead_ns", "replay.replay_overhead_ns");
    if (rep.is_object() && rep.contains("stall")) {
      p.call_stall_ns = number(rep["stall"], "calls_ns", "replay.stall.calls_ns");
      p.stall_cpu_ns = number(rep["stall"], "cpu_ns", "replay.stall.cpu_ns");
      if (const auto& st = rep["stall"]; st.is_object() && st.contains("cpu_quota")) {
        if (!st["cpu_quota"].is_number() || !(st["cpu_quota"].get<double>() >= 0))
          throw Error(
              fmt::format("{}: replay.stall.cpu_quota: expected a non-negative number, "
                          "got {}",
                          where, st["cpu_quota"].dump()));
        p.cpu_quota = st["cpu_quota"].get<double>();
      }
    }
  }
  return p;
}

ComputeScale measure_scale(const TraceDir& capture, const std::vector<ReplayProfile>& profiles,
                           StallTime stalls) {
  struct Sum {
    double captured = 0, replayed = 0;
  };
  std::unordered_map<std::uint64_t, Sum> sites;
  ComputeScale s;
  double all_captured = 0, all_replayed = 0;
  for (const ReplayProfile& p : profiles) {
    RankEventReader cap(capture.events_path(p.rank));
    const auto rep_path = TraceDir(p.dir).events_path(p.rank);
    RankEventReader rep(rep_path);
    Event a, b;
    std::int64_t prev_a = 0, prev_b = 0;
    bool first = true;
    // This rank's sums, in measured time and in CPU time (its stalls out): the factor that
    // spreads its stalls is known only at the end.
    struct RankSum {
      double captured = 0, measured = 0, cpu = 0;
    };
    RankSum total;      // the segments of at least kRatioMinSegmentNs, captured
    RankSum all_sizes;  // every segment: the ratio when no segment is that long
    std::unordered_map<std::uint64_t, RankSum> rank_sites;
    StallSpread& st = s.stalls[p.rank];
    st.mode = stalls != StallTime::automatic       ? stalls
              : p.cpu_quota && *p.cpu_quota == 0.0 ? StallTime::drop
                                                   : StallTime::spread;
    std::uint64_t overhead = 0;
    while (cap.next(a)) {
      if (!rep.next(b)) throw Error(profile_ends(rep, a));
      check_same_call(a, b, rep_path.string());
      const std::int64_t ga = gap_of(a, prev_a), gb = gap_of(b, prev_b);
      overhead += b.overhead_ns;
      if (first) {  // the time before the first call is not compute of the program
        first = false;
        continue;
      }
      const std::uint64_t stall = std::min<std::uint64_t>(b.stall_ns, gb);
      st.compute_ns += static_cast<std::uint64_t>(gb);
      st.segments_ns += stall;
      const double cpu = static_cast<double>(gb) - static_cast<double>(stall);
      const auto add = [&](RankSum& sum) {
        sum.captured += static_cast<double>(ga);
        sum.measured += static_cast<double>(gb);
        sum.cpu += cpu;
      };
      add(all_sizes);
      if (ga >= kRatioMinSegmentNs) add(total);
      if (a.callsite) add(rank_sites[*a.callsite]);
    }
    // Damage after the last call (in the trailer, say) is still damage: its totals are not
    // to be trusted. A cut capture never reaches the profile's end.
    if (cap.complete() && !rep.next(b) && !rep.problem().empty()) throw Error(rep.problem());
    st.measured = p.call_stall_ns.has_value() || st.segments_ns > 0;
    st.calls_ns = p.call_stall_ns.value_or(0);
    st.overhead_ns = std::max(p.overhead_ns.value_or(overhead), st.calls_ns);
    st.ran_ns = p.stall_cpu_ns.value_or(0);
    st.cpu_quota = p.cpu_quota.value_or(0);
    st.finish();
    const auto given = [&st](const RankSum& r) {
      return st.active() ? r.cpu * st.factor : r.measured;
    };
    s.captured_ns += total.captured;
    s.replayed_ns += given(total);
    all_captured += all_sizes.captured;
    all_replayed += given(all_sizes);
    for (const auto& [site, sum] : rank_sites) {
      Sum& all = sites[site];
      all.captured += sum.captured;
      all.replayed += given(sum);
    }
    ++s.replayed_ranks;
    if (!s.source_rank || p.rank < *s.source_rank) {
      s.source_rank = p.rank;
      s.source_events = rep_path;
    }
  }
  if (s.captured_ns == 0) {
    s.captured_ns = all_captured;
    s.replayed_ns = all_replayed;
  }
  if (s.captured_ns > 0) s.overall = s.replayed_ns / s.captured_ns;
  for (const auto& [site, sum] : sites)
    if (sum.captured > 0) s.by_callsite[site] = sum.replayed / sum.captured;
  return s;
}

TraceRankFeed::TraceRankFeed(const TraceDir& capture, std::uint32_t rank,
                             const ClockOffsets* clocks, std::uint32_t nprocs,
                             std::optional<std::filesystem::path> profile_events,
                             const ComputeScale* scale, const LogGPSParams* params)
    : capture_(capture.events_path(rank)),
      rank_(rank),
      clocks_(clocks),
      scale_(scale),
      params_(params),
      ctx_(rank, nprocs) {
  if (profile_events) {
    replay_.emplace(*profile_events);
    if (scale)
      if (const auto it = scale->stalls.find(rank); it != scale->stalls.end())
        spread_ = StallSpreader(&it->second);
  } else if (scale && scale->source_rank) {
    const auto it = scale->stalls.find(*scale->source_rank);
    aligned_ =
        std::make_unique<AlignedCompute>(capture, rank, *scale->source_rank, scale->source_events,
                                         it == scale->stalls.end() ? nullptr : &it->second);
  }
  have_first_ = capture_.next(first_);
  if (have_first_) {
    const auto start = static_cast<std::int64_t>(first_.start_ns);
    first_start_ = start + offset(start);
  }
}

TraceRankFeed::~TraceRankFeed() = default;

std::uint64_t TraceRankFeed::aligned_segments() const { return aligned_ ? aligned_->aligned() : 0; }

bool TraceRankFeed::next(Event& ev, std::int64_t& compute_ns) {
  if (!started_) {
    started_ = true;
    if (!have_first_) return false;
    ev = first_;
  } else if (!capture_.next(ev)) {
    return false;
  }
  // Every event goes through the line-up, the first too, so that it keeps step.
  const std::optional<std::int64_t> aligned = aligned_ ? aligned_->next(ev) : std::nullopt;
  std::int64_t captured_gap = 0;
  if (recorded_.events == 0) {
    // The first call: the rank's start on the common time base.
    compute_ns = first_start_ - base_;
    prev_capture_end_ = static_cast<std::int64_t>(ev.end_ns);
    captured_gap = compute_ns;
    if (replay_) {
      if (!replay_->next(replay_ev_))
        throw Error(replay_->problem().empty()
                        ? fmt::format("{}: no events", replay_->file().path())
                        : replay_->problem());
      check_same_call(ev, replay_ev_, replay_->file().path());
      prev_replay_end_ = static_cast<std::int64_t>(replay_ev_.end_ns);
    }
  } else {
    captured_gap = gap_of(ev, prev_capture_end_);
    if (replay_) {
      if (!replay_->next(replay_ev_)) throw Error(profile_ends(*replay_, ev));
      check_same_call(ev, replay_ev_, replay_->file().path());
      compute_ns = spread_(gap_of(replay_ev_, prev_replay_end_), replay_ev_.stall_ns);
    } else if (aligned) {
      compute_ns = *aligned;
    } else if ((scale_ == nullptr || (scale_->overall == 1.0 && scale_->by_callsite.empty())) &&
               captured_gap < kExactDouble) {
      compute_ns = captured_gap;  // what round_ns(gap * 1.0) gives, without the doubles
    } else {
      double ratio = scale_ ? scale_->overall : 1.0;
      if (scale_ && ev.callsite && !scale_->by_callsite.empty()) {
        const auto it = scale_->by_callsite.find(*ev.callsite);
        if (it != scale_->by_callsite.end()) ratio = it->second;
      }
      compute_ns = round_ns(static_cast<double>(captured_gap) * ratio);
    }
  }
  const std::int64_t d = static_cast<std::int64_t>(ev.end_ns - ev.start_ns);
  const std::int64_t wait =
      params_ ? std::clamp<std::int64_t>(d - solo_cost(ev, ctx_, *params_), 0, d) : 0;
  if (classify(ev.function).shapes) ctx_.observe(ev);
  recorded_.compute_ns += captured_gap;
  recorded_.wait_ns += wait;
  recorded_.comm_ns += d - wait;
  const auto end = static_cast<std::int64_t>(ev.end_ns);
  recorded_.end_ns = end + offset(end) - base_;
  ++recorded_.events;
  return true;
}

std::string TraceRankFeed::damage() const { return capture_.problem(); }

std::string TraceRankFeed::problem() const {
  if (capture_.complete()) return {};
  return capture_.problem().empty() ? capture_.file().path() + ": stream ended early"
                                    : capture_.problem();
}

}  // namespace encore::predict
