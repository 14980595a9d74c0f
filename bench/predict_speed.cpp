// Speed of the loggps model on a synthetic 64-rank trace (ring exchange: Irecv, Isend,
// Waitall per step, an Allreduce every 64 steps; 1 us compute, 100 ns calls). Prints one JSON
// object per measurement: the engine fed from memory, the trace decode alone, and the engine
// fed from the trace files (what `encore predict` does), with events per second on one core
// and the peak resident size. Usage: bench_predict_speed DIR [EVENTS] [RANKS] [ONLY]; the trace
// is written into DIR once and reused. ONLY (memory, decode or trace) runs that measurement
// alone, e.g. under callgrind, whose instruction counts do not move with the machine's load.
#include <sys/resource.h>

#include <array>
#include <bit>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "encore/event_format.hpp"
#include "encore/event_reader.hpp"
#include "encore/manifest.hpp"
#include "encore/predict/loggps_engine.hpp"
#include "encore/predict/trace_feed.hpp"
#include "encore/rank_trace_writer.hpp"
#include "encore/trace_dir.hpp"

namespace {

using namespace encore;

std::uint64_t world_id() {
  const auto h = predefined_handles(HandleKind::comm);
  for (std::size_t i = 0; i < h.size(); ++i)
    if (std::string_view(h[i].name) == "MPI_COMM_WORLD")
      return event_format::kFirstPredefinedId + i;
  return 0;
}

Event make(std::uint16_t f) {
  Event e;
  e.function = f;
  const auto params = function_table()[f].params;
  e.args.resize(params.size());
  for (std::size_t i = 0; i < params.size(); ++i) {
    e.args[i].present = true;
    if (params[i].role == Role::comm) e.args[i].scalar = static_cast<std::int64_t>(world_id());
    if (params[i].role == Role::count) e.args[i].scalar = 1;
    if (params[i].role == Role::datatype) e.args[i].scalar = 2;
  }
  return e;
}

void set(Event& e, Role role, std::int64_t v) {
  const auto params = function_table()[e.function].params;
  for (std::size_t i = 0; i < params.size(); ++i)
    if (params[i].role == role) {
      e.args[i].scalar = v;
      return;
    }
}

// Copies `from` into `to` the way the decoder fills an event (event_decoder.cpp): into the
// storage `to` already has (its args are never shrunk), clearing only the arguments and extras
// the previous event left something in (Event::stale), so the feed allocates nothing per call
// and costs what decoding the same fields costs beyond reading them.
template <class V>
[[gnu::noinline]] void copy_items(V& to, const V& from) {
  to.assign(from.begin(), from.end());
}

void clear_arg(ArgValue& a) {
  a.list.clear();
  a.remote.clear();
  a.requests.clear();
  a.statuses.clear();
  a.text.clear();
  a.real = 0;
  a.flags = 0;
}

bool holds_more(const ArgValue& b) {
  return !b.list.empty() || !b.remote.empty() || !b.requests.empty() || !b.statuses.empty() ||
         !b.text.empty() || b.real != 0 || b.flags != 0;
}

constexpr std::uint64_t kExtras = std::uint64_t{1} << 63;

// Bit i set when from.args[i] holds more than present and scalar (the decoder knows this from
// the coding of each parameter; here it is worked out once per prototype event).
std::uint64_t more_mask(const Event& from) {
  std::uint64_t m = 0;
  for (std::size_t i = 0; i < from.args.size(); ++i)
    if (holds_more(from.args[i])) m |= std::uint64_t{1} << i;
  return m;
}

void fill(Event& to, const Event& from, std::uint64_t more) {
  to.function = from.function;
  to.start_ns = from.start_ns;
  to.end_ns = from.end_ns;
  to.rc = from.rc;
  const std::size_t n = from.args.size();
  if (to.args.size() < n) to.args.resize(n);
  const std::uint64_t mask = (std::uint64_t{1} << n) - 1;
  for (std::uint64_t bits = to.stale & mask; bits != 0; bits &= bits - 1)
    clear_arg(to.args[static_cast<std::size_t>(std::countr_zero(bits))]);
  to.stale &= ~mask;
  for (std::size_t i = 0; i < n; ++i) {
    ArgValue& a = to.args[i];
    const ArgValue& b = from.args[i];
    a.present = b.present;
    a.scalar = b.scalar;
    if ((more >> i & 1) == 0) continue;
    a.real = b.real;
    a.flags = b.flags;
    if (!b.list.empty()) copy_items(a.list, b.list);
    if (!b.remote.empty()) copy_items(a.remote, b.remote);
    if (!b.requests.empty()) copy_items(a.requests, b.requests);
    if (!b.statuses.empty()) copy_items(a.statuses, b.statuses);
    if (!b.text.empty()) a.text.assign(b.text);
    to.stale |= std::uint64_t{1} << i;
  }
  if (to.stale & kExtras) {
    to.payloads.clear();
    to.send_hashes.clear();
    to.signatures.clear();
    to.callsite.reset();
    to.counters.clear();
    to.stale &= ~kExtras;
  }
  if (!from.payloads.empty() || !from.send_hashes.empty()) {
    if (!from.payloads.empty()) copy_items(to.payloads, from.payloads);
    if (!from.send_hashes.empty()) copy_items(to.send_hashes, from.send_hashes);
    to.stale |= kExtras;
  }
}

// One rank's calls, generated on the fly.
class Synth : public predict::RankFeed {
 public:
  Synth(std::uint32_t rank, std::uint32_t nprocs, std::uint64_t events)
      : events_(events),
        irecv_(make(fn::Irecv)),
        isend_(make(fn::Isend)),
        waitall_(make(fn::Waitall)),
        allreduce_(make(fn::Allreduce)) {
    set(irecv_, Role::peer, (rank + nprocs - 1) % nprocs);
    set(isend_, Role::peer, (rank + 1) % nprocs);
    isend_.send_hashes = {{0, 8}};
    allreduce_.send_hashes = {{0, 8}};
    allreduce_.payloads = {{0, 2, 1, 8, 0}};
    set(waitall_, Role::count, 2);
    waitall_.args[1].requests = {{false, 0, 0}, {false, 0, 1}};
    for (auto* e : {&irecv_, &isend_, &waitall_, &allreduce_}) e->end_ns = 100;
    for (int i = 0; i < 4; ++i)
      more_[i] = more_mask(*std::array{&irecv_, &isend_, &waitall_, &allreduce_}[i]);
  }
  bool next(Event& ev, std::int64_t& compute) override {
    if (i_ == events_) return false;
    const std::uint64_t step = i_ - base_;
    if (step == 0) {
      fill(ev, irecv_, more_[0]);
    } else if (step == 1) {
      fill(ev, isend_, more_[1]);
    } else if (step == 2) {
      waitall_.args[1].requests = {{false, 0, base_}, {false, 0, base_ + 1}};
      fill(ev, waitall_, more_[2]);
    } else {
      fill(ev, allreduce_, more_[3]);
    }
    ev.index = i_++;
    const bool coll_step = (++steps_ % 64) == 0;
    if (step == 2 && !coll_step) base_ = i_;
    if (step == 3) base_ = i_;
    compute = 1000;
    return true;
  }

 private:
  std::uint64_t events_, i_ = 0, base_ = 0, steps_ = 0;
  Event irecv_, isend_, waitall_, allreduce_;
  std::array<std::uint64_t, 4> more_{};
};

class NullSink : public predict::PredictSink {
 public:
  void on_event(std::uint32_t, const Event&, std::int64_t, std::int64_t, std::int64_t end,
                std::int64_t) override {
    last = end;
  }
  std::int64_t last = 0;
};

long peak_rss_kib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void write_trace(const std::filesystem::path& dir, std::uint32_t n, std::uint64_t per_rank) {
  std::filesystem::create_directories(dir);
  const TraceDir d(dir);
  Manifest m;
  m.kind = TraceKind::capture;
  m.nprocs = n;
  m.command = {"synthetic ring"};
  m.function_table.hash = std::string(kFunctionTableHash);
  for (const auto& f : function_table()) m.function_table.functions.push_back(f.name);
  for (std::uint32_t r = 0; r < n; ++r) {
    Synth s(r, n, per_rank);
    RankTraceWriter w(d.events_path(r), d.payload_path(r), r);
    Event ev;
    std::int64_t compute = 0;
    std::uint64_t t = 0;
    const std::byte payload[8] = {};
    while (s.next(ev, compute)) {
      ev.start_ns = t + static_cast<std::uint64_t>(compute);
      ev.end_ns = ev.start_ns + 100;
      t = ev.end_ns;
      w.write(ev, ev.payloads.empty() ? std::span<const std::byte>() : std::span(payload));
    }
    w.close();
    RankInfo info;
    info.rank = r;
    info.status = RankStatus::complete;
    info.events = w.events();
    m.ranks.push_back(info);
  }
  save_manifest(m, d.manifest_path());
}

void report(const char* what, std::uint64_t events, double secs, std::uint32_t n) {
  std::printf(
      "{\"measure\": \"%s\", \"ranks\": %u, \"events\": %llu, \"seconds\": %.3f, "
      "\"events_per_s\": %.0f, \"peak_rss_mib\": %.1f}\n",
      what, n, static_cast<unsigned long long>(events), secs, static_cast<double>(events) / secs,
      static_cast<double>(peak_rss_kib()) / 1024.0);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s DIR [EVENTS] [RANKS] [memory|decode|trace]\n", argv[0]);
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  const std::uint64_t total = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 10'000'000;
  const std::uint32_t n =
      argc > 3 ? static_cast<std::uint32_t>(std::strtoul(argv[3], nullptr, 10)) : 64;
  const std::string only = argc > 4 ? argv[4] : "";
  if (!only.empty() && only != "memory" && only != "decode" && only != "trace") {
    std::fprintf(stderr, "ONLY is memory, decode or trace, not %s\n", only.c_str());
    return 2;
  }
  if (n < 2 || total < n) {
    std::fprintf(stderr, "need at least 2 ranks and one event per rank\n");
    return 2;
  }
  const std::uint64_t per_rank = total / n;
  auto runs = [&only](const char* what) { return only.empty() || only == what; };
  predict::LogGPSParams params;
  try {
    if (runs("memory")) {
      std::vector<std::unique_ptr<predict::RankFeed>> feeds;
      for (std::uint32_t r = 0; r < n; ++r)
        feeds.push_back(std::make_unique<Synth>(r, n, per_rank));
      NullSink sink;
      const double t0 = now();
      const auto st = predict::run_loggps(feeds, params, sink);
      report("engine from memory", st.events, now() - t0, n);
    }
    if (!runs("decode") && !runs("trace")) return 0;  // memory alone: no trace needed
    const TraceDir d(dir);
    bool fresh = true;
    if (std::filesystem::exists(d.manifest_path())) {
      const Manifest m = load_manifest(d.manifest_path());
      fresh = m.nprocs != n || m.ranks.empty() || m.ranks[0].events != per_rank;
    }
    if (fresh) {
      const double t0 = now();
      write_trace(dir, n, per_rank);
      report("trace written", per_rank * n, now() - t0, n);
    }
    if (runs("decode")) {
      const double t0 = now();
      std::uint64_t events = 0;
      Event ev;
      for (std::uint32_t r = 0; r < n; ++r) {
        RankEventReader reader(d.events_path(r));
        while (reader.next(ev)) ++events;
      }
      report("decode only", events, now() - t0, n);
    }
    if (runs("trace")) {
      std::vector<std::unique_ptr<predict::RankFeed>> feeds;
      std::vector<predict::TraceRankFeed*> raw;
      for (std::uint32_t r = 0; r < n; ++r) {
        auto f = std::make_unique<predict::TraceRankFeed>(d, r, nullptr, n, std::nullopt, nullptr,
                                                          &params);
        raw.push_back(f.get());
        feeds.push_back(std::move(f));
      }
      for (auto* f : raw) f->set_base(0);
      NullSink sink;
      const double t0 = now();
      const auto st = predict::run_loggps(feeds, params, sink);
      report("engine from the trace", st.events, now() - t0, n);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_predict_speed: %s\n", e.what());
    return 1;
  }
  return 0;
}
