// encore stats: where the time and the bytes went, per rank and in total.
#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "callsite_names.hpp"
#include "common.hpp"
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "encore/error.hpp"
#include "encore/event_reader.hpp"

namespace encore::tool {
namespace {

constexpr std::size_t kTopCallsites = 10;

struct FunctionStats {
  std::uint64_t calls = 0;
  std::uint64_t time_ns = 0;
  std::uint64_t tool_ns = 0;  // capture overhead spent around these calls
};

struct RankStats {
  std::uint32_t rank = 0;
  std::uint64_t events = 0;
  std::set<std::uint16_t> threads;
  std::uint64_t wall_ns = 0;     // latest corrected end
  std::uint64_t mpi_ns = 0;      // sum of call durations
  std::uint64_t compute_ns = 0;  // sum of gaps between calls (and before the first)
  std::uint64_t bytes_received = 0;
  std::uint64_t payloads = 0;
  std::uint64_t bytes_sent = 0;
  std::uint64_t sends = 0;
  std::uint64_t contributed_bytes = 0;  // collectives' hashed inputs (format 1.4)
  std::uint64_t contributions = 0;
  std::uint64_t overhead_ns = 0;
  std::uint64_t stall_ns = 0;
  std::uint64_t stalls = 0;
  std::uint64_t first_read_ns = 0;  // part of mpi_ns (format 1.3)
  std::uint64_t first_reads = 0;
  std::uint64_t errors = 0;  // calls with rc != MPI_SUCCESS
  std::map<std::uint16_t, FunctionStats> functions;
  std::map<std::uint64_t, std::uint64_t> callsites;
  bool complete = true;
  std::string problem;

  void add(const RankStats& o) {
    events += o.events;
    wall_ns = std::max(wall_ns, o.wall_ns);
    mpi_ns += o.mpi_ns;
    compute_ns += o.compute_ns;
    bytes_received += o.bytes_received;
    payloads += o.payloads;
    bytes_sent += o.bytes_sent;
    sends += o.sends;
    contributed_bytes += o.contributed_bytes;
    contributions += o.contributions;
    overhead_ns += o.overhead_ns;
    stall_ns += o.stall_ns;
    stalls += o.stalls;
    first_read_ns += o.first_read_ns;
    first_reads += o.first_reads;
    errors += o.errors;
    for (const auto& [f, s] : o.functions) {
      functions[f].calls += s.calls;
      functions[f].time_ns += s.time_ns;
    }
    complete = complete && o.complete;
  }
};

struct StatsOptions {
  std::string trace;
  bool json = false;
};

RankStats collect(const Trace& t, std::uint32_t rank) {
  require_rank_files(t, rank);
  std::unique_ptr<RankEventReader> reader;
  try {
    reader = std::make_unique<RankEventReader>(t.dir.events_path(rank));
  } catch (const Error& e) {
    throw ExitError(kExitUnreadable, e.what());
  }
  RankStats s;
  s.rank = rank;
  std::unordered_map<std::uint16_t, std::uint64_t> prev_end;
  // An event's overhead is mostly the previous call's post-processing (its payload copy, its
  // hash): it is charged to the previous call of the same thread.
  std::unordered_map<std::uint16_t, std::uint16_t> prev_function;
  Event ev;
  while (reader->next(ev)) {
    if (const auto pf = prev_function.find(ev.thread); pf != prev_function.end())
      s.functions[pf->second].tool_ns += ev.overhead_ns;
    prev_function[ev.thread] = ev.function;
    ++s.events;
    s.threads.insert(ev.thread);
    auto& prev = prev_end[ev.thread];
    s.compute_ns += ev.start_ns >= prev ? ev.start_ns - prev : 0;
    prev = ev.end_ns;
    const std::uint64_t d = ev.end_ns - ev.start_ns;
    s.mpi_ns += d;
    s.wall_ns = std::max(s.wall_ns, ev.end_ns);
    auto& f = s.functions[ev.function];
    f.calls += 1;
    f.time_ns += d;
    s.bytes_received += ev.payload_bytes();
    s.payloads += ev.payloads.size();
    for (const auto& h : ev.send_hashes) s.bytes_sent += h.bytes;
    s.sends += ev.send_hashes.size();
    for (const auto& h : ev.contribution_hashes) s.contributed_bytes += h.bytes;
    s.contributions += ev.contribution_hashes.size();
    s.overhead_ns += ev.overhead_ns;
    if (ev.stall_ns != 0) {
      s.stall_ns += ev.stall_ns;
      s.stalls += 1;
    }
    if (ev.first_read_ns != 0) {
      s.first_read_ns += ev.first_read_ns;
      s.first_reads += 1;
    }
    if (ev.rc != 0) s.errors += 1;
    if (ev.callsite) s.callsites[*ev.callsite] += 1;
  }
  s.complete = reader->complete();
  if (!s.complete)
    s.problem = reader->problem().empty() ? reader->file().path() + ": stream ended early"
                                          : reader->problem();
  return s;
}

// Functions by decreasing call count, then name.
std::vector<std::pair<std::uint16_t, FunctionStats>> by_count(
    const std::map<std::uint16_t, FunctionStats>& m) {
  std::vector<std::pair<std::uint16_t, FunctionStats>> v(m.begin(), m.end());
  const auto table = function_table();
  std::sort(v.begin(), v.end(), [&](const auto& a, const auto& b) {
    if (a.second.calls != b.second.calls) return a.second.calls > b.second.calls;
    return std::string_view(table[a.first].name) < std::string_view(table[b.first].name);
  });
  return v;
}

std::vector<std::pair<std::uint64_t, std::uint64_t>> top_callsites(
    const std::map<std::uint64_t, std::uint64_t>& m) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> v(m.begin(), m.end());
  std::stable_sort(v.begin(), v.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  if (v.size() > kTopCallsites) v.resize(kTopCallsites);
  return v;
}

double percent(std::uint64_t part, std::uint64_t whole) {
  return whole == 0 ? 0.0 : 100.0 * static_cast<double>(part) / static_cast<double>(whole);
}

nlohmann::json to_json(const RankStats& s, bool total, const CallsiteNames* names) {
  const auto table = function_table();
  nlohmann::json j;
  if (!total) {
    j["rank"] = s.rank;
    j["threads"] = s.threads.size();
  }
  j["events"] = s.events;
  j["wall_ns"] = s.wall_ns;
  j["mpi_ns"] = s.mpi_ns;
  j["compute_ns"] = s.compute_ns;
  j["bytes_received"] = s.bytes_received;
  j["payloads"] = s.payloads;
  j["bytes_sent"] = s.bytes_sent;
  j["sends"] = s.sends;
  j["contributed_bytes"] = s.contributed_bytes;
  j["contributions"] = s.contributions;
  j["overhead_ns"] = s.overhead_ns;
  j["stall_ns"] = s.stall_ns;
  j["stalls"] = s.stalls;
  j["first_read_ns"] = s.first_read_ns;
  j["first_reads"] = s.first_reads;
  j["errors"] = s.errors;
  auto& fns = j["functions"] = nlohmann::json::array();
  auto& opaque = j["opaque"] = nlohmann::json::array();
  for (const auto& [f, fs] : by_count(s.functions)) {
    fns.push_back({{"name", table[f].name},
                   {"calls", fs.calls},
                   {"time_ns", fs.time_ns},
                   {"tool_ns", fs.tool_ns}});
    if (!table[f].modelled) opaque.push_back({{"name", table[f].name}, {"calls", fs.calls}});
  }
  if (!total) {
    auto& sites = j["callsites"] = nlohmann::json::array();
    for (const auto& [id, n] : top_callsites(s.callsites)) {
      sites.push_back({{"id", id}, {"calls", n}});
      if (names) sites.back()["site"] = names->name(id);
    }
  }
  j["complete"] = s.complete;
  if (!total && !s.problem.empty()) j["problem"] = s.problem;
  return j;
}

void print_text(const RankStats& s, const std::string& title, const CallsiteNames* names,
                TraceKind kind) {
  // Whose overhead: the capture tool's, or the replay library's (reading, checking, feeding).
  const char* overhead_label = kind == TraceKind::replay ? "replay" : "capture";
  const auto table = function_table();
  fmt::print("{}: {} events{}, wall {}\n", title, s.events,
             s.threads.size() > 1 ? fmt::format(" on {} threads", s.threads.size()) : "",
             format_duration(s.wall_ns));
  const std::uint64_t busy = s.mpi_ns + s.compute_ns;
  fmt::print("  time: MPI {} ({:.1f}%), compute {} ({:.1f}%)\n", format_duration(s.mpi_ns),
             percent(s.mpi_ns, busy), format_duration(s.compute_ns), percent(s.compute_ns, busy));
  fmt::print("  data: received {} ({} B) in {} payloads, sent {} ({} B) in {} hashed sends\n",
             format_bytes(s.bytes_received), s.bytes_received, s.payloads,
             format_bytes(s.bytes_sent), s.bytes_sent, s.sends);
  if (s.contributions != 0)
    fmt::print("  contributed to collectives: {} ({} B) in {} hashed blocks\n",
               format_bytes(s.contributed_bytes), s.contributed_bytes, s.contributions);
  if (s.first_reads != 0)
    fmt::print("  first reads of received data: {} in {} calls (in the MPI time)\n",
               format_duration(s.first_read_ns), s.first_reads);
  fmt::print("  {}: overhead {}, {} stalls ({})\n", overhead_label, format_duration(s.overhead_ns),
             s.stalls, format_duration(s.stall_ns));
  if (s.errors != 0) fmt::print("  failed calls (rc != MPI_SUCCESS): {}\n", s.errors);
  fmt::print("  calls:\n");
  std::string opaque;
  for (const auto& [f, fs] : by_count(s.functions)) {
    fmt::print("    {:<28} {:>10}  {:>10}\n", table[f].name, fs.calls, format_duration(fs.time_ns));
    if (!table[f].modelled)
      opaque += fmt::format("{}{} x{}", opaque.empty() ? "" : ", ", table[f].name, fs.calls);
  }
  fmt::print("  opaque (not modelled, arguments not recorded): {}\n",
             opaque.empty() ? "none" : opaque);
  if (!s.callsites.empty()) {
    std::string sites;
    for (const auto& [id, n] : top_callsites(s.callsites)) {
      sites += fmt::format("{}#{} {} x{}", sites.empty() ? "" : ", ", id,
                           names ? names->name(id) : "", n);
    }
    fmt::print("  top call sites: {}\n", sites);
  }
  if (!s.complete) fmt::print("  INCOMPLETE: {}\n", s.problem);
}

int stats(const StatsOptions& o) {
  const Trace t = open_trace(o.trace);
  RankStats total;
  std::vector<RankStats> ranks;
  nlohmann::json doc;
  doc["trace"] = o.trace;
  doc["nprocs"] = t.manifest.nprocs;
  doc["ranks"] = nlohmann::json::array();
  for (const std::uint32_t r : selected_ranks(t, std::nullopt)) {
    RankStats s = collect(t, r);
    total.add(s);
    std::optional<CallsiteNames> names;
    if (!s.callsites.empty()) names.emplace(t.dir.root(), r);
    const CallsiteNames* n = names && !names->empty() ? &*names : nullptr;
    if (o.json)
      doc["ranks"].push_back(to_json(s, false, n));
    else
      print_text(s, fmt::format("rank {}", r), n, t.manifest.kind);
    if (!s.complete) ranks.push_back(std::move(s));  // only the problems are kept
  }
  if (o.json) {
    doc["total"] = to_json(total, true, nullptr);
    fmt::print("{}\n", doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
  } else {
    print_text(total, fmt::format("total ({} ranks)", t.manifest.ranks.size()), nullptr,
               t.manifest.kind);
  }
  for (const RankStats& s : ranks) print_error(s.problem);
  return ranks.empty() ? kExitOk : kExitTraceProblem;
}

}  // namespace

Subcommand add_stats(CLI::App& parent) {
  auto o = std::make_shared<StatsOptions>();
  CLI::App* app = parent.add_subcommand(
      "stats", "Summarise a trace: calls per function, MPI vs compute time, bytes, overhead.");
  app->add_option("trace", o->trace, "Trace directory.")->required();
  app->add_flag("--json", o->json, "Print one JSON object instead of text.");
  app->footer(std::string(kExitCodesFooter) +
              "\nA rank whose stream is cut or damaged is summarised up to the damage and "
              "reported on stderr (exit 1).");
  return {app, [o] { return stats(*o); }};
}

}  // namespace encore::tool
