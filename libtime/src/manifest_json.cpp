// Conversion between Manifest and JSON, with validation that names the key.
#include <limits>
#include <string>

#include "encore/error.hpp"
#include "encore/manifest.hpp"

namespace encore {

using nlohmann::json;

std::string_view to_string(TraceKind kind) noexcept {
  switch (kind) {
    case TraceKind::capture:
      return "capture";
    case TraceKind::replay:
      return "replay";
    case TraceKind::predicted:
      return "predicted";
  }
  return "unknown";
}

std::string_view to_string(RankStatus status) noexcept {
  switch (status) {
    case RankStatus::running:
      return "running";
    case RankStatus::complete:
      return "complete";
    case RankStatus::aborted:
      return "aborted";
  }
  return "unknown";
}

namespace {

// A JSON object plus its dotted key path, for error messages.
class Node {
 public:
  Node(const json& value, std::string key, std::string_view source)
      : value_(value), key_(std::move(key)), source_(source) {
    if (!value_.is_object()) fail(key_, "expected an object");
  }

  Node object(std::string_view name) const { return Node(get(name), join(name), source_); }

  const json& get(std::string_view name) const {
    const auto it = value_.find(name);
    if (it == value_.end()) fail_at(join(name), "missing key");
    return *it;
  }
  bool has(std::string_view name) const { return value_.contains(name); }
  const json& value() const { return value_; }

  std::string string(std::string_view name) const {
    const json& v = get(name);
    if (!v.is_string()) fail(join(name), "expected a string");
    return v.get<std::string>();
  }
  bool boolean(std::string_view name) const {
    const json& v = get(name);
    if (!v.is_boolean()) fail(join(name), "expected true or false");
    return v.get<bool>();
  }
  double number(std::string_view name) const {
    const json& v = get(name);
    if (!v.is_number()) fail(join(name), "expected a number");
    return v.get<double>();
  }
  std::uint64_t unsigned_int(std::string_view name,
                             std::uint64_t max = std::numeric_limits<std::uint64_t>::max()) const {
    const json& v = get(name);
    if (!v.is_number_unsigned() || v.get<std::uint64_t>() > max)
      fail(join(name), "expected an integer from 0 to " + std::to_string(max));
    return v.get<std::uint64_t>();
  }
  std::int64_t signed_int(std::string_view name) const {
    const json& v = get(name);
    const bool fits = v.is_number_integer() &&
                      (!v.is_number_unsigned() ||
                       v.get<std::uint64_t>() <=
                           static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()));
    if (!fits) fail(join(name), "expected a 64-bit signed integer");
    return v.get<std::int64_t>();
  }
  std::vector<std::string> strings(std::string_view name) const {
    const json& v = get(name);
    if (!v.is_array()) fail(join(name), "expected an array of strings");
    std::vector<std::string> out;
    out.reserve(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (!v[i].is_string()) fail(join(name) + "[" + std::to_string(i) + "]", "expected a string");
      out.push_back(v[i].get<std::string>());
    }
    return out;
  }

  std::string join(std::string_view name) const {
    return key_.empty() ? std::string(name) : key_ + "." + std::string(name);
  }
  [[noreturn]] void fail(const std::string& key, std::string_view what) const {
    throw Error(format_in(
        source_, (key.empty() ? std::string("top level") : key) + ": " + std::string(what)));
  }
  [[noreturn]] void fail_at(const std::string& key, std::string_view what) const {
    throw Error(format_in(source_, std::string(what) + " \"" + key + "\""));
  }

 private:
  const json& value_;
  std::string key_;
  std::string_view source_;
};

template <class Enum, std::size_t N>
Enum parse_enum(const Node& n, std::string_view name, const Enum (&values)[N]) {
  const std::string text = n.string(name);
  std::string expected;
  for (Enum e : values) {
    if (to_string(e) == text) return e;
    expected +=
        (expected.empty() ? "" : ", ") + std::string("\"") + std::string(to_string(e)) + "\"";
  }
  n.fail(n.join(name), "expected one of " + expected + ", got \"" + text + "\"");
}

ClockSync parse_sync(const Node& n) {
  ClockSync out;
  out.offset_ns = n.signed_int("offset_ns");
  out.at_ns = n.unsigned_int("at_ns");
  out.error_ns = n.unsigned_int("error_ns");
  out.method = n.string("method");
  if (out.method != "self" && out.method != "shared clock" && out.method != "round trips")
    n.fail(n.join("method"),
           "expected \"self\", \"shared clock\" or \"round trips\", got \"" + out.method + "\"");
  return out;
}

json sync_to_json(const ClockSync& s) {
  return {{"offset_ns", s.offset_ns},
          {"at_ns", s.at_ns},
          {"error_ns", s.error_ns},
          {"method", s.method}};
}

RankInfo parse_rank(const Node& r) {
  RankInfo out;
  out.rank =
      static_cast<std::uint32_t>(r.unsigned_int("rank", std::numeric_limits<std::uint32_t>::max()));
  out.host = r.string("host");
  out.pid = r.signed_int("pid");
  const std::string order = r.string("byte_order");
  const auto parsed = parse_byte_order(order);
  if (!parsed)
    r.fail(r.join("byte_order"), "expected \"little\" or \"big\", got \"" + order + "\"");
  out.byte_order = *parsed;
  const Node s = r.object("sizes");
  constexpr std::uint64_t kMaxSize = 64;
  out.sizes.int_size = static_cast<std::uint32_t>(s.unsigned_int("int", kMaxSize));
  out.sizes.long_size = static_cast<std::uint32_t>(s.unsigned_int("long", kMaxSize));
  out.sizes.pointer_size = static_cast<std::uint32_t>(s.unsigned_int("pointer", kMaxSize));
  out.sizes.aint_size = static_cast<std::uint32_t>(s.unsigned_int("aint", kMaxSize));
  out.sizes.offset_size = static_cast<std::uint32_t>(s.unsigned_int("offset", kMaxSize));
  out.sizes.count_size = static_cast<std::uint32_t>(s.unsigned_int("count", kMaxSize));
  out.clock_offset_ns = r.signed_int("clock_offset_ns");
  if (r.has("clock_sync")) {
    const Node cs = r.object("clock_sync");
    if (cs.has("init")) out.sync_init = parse_sync(cs.object("init"));
    if (cs.has("finalize")) out.sync_end = parse_sync(cs.object("finalize"));
  }
  out.status =
      parse_enum(r, "status", {RankStatus::running, RankStatus::complete, RankStatus::aborted});
  out.events = r.unsigned_int("events");
  out.payload_bytes = r.unsigned_int("payload_bytes");
  return out;
}

// `known` written over `base`, recursing into objects present in both.
json overlay(json base, const json& known) {
  if (!base.is_object() || !known.is_object()) return known;
  for (auto it = known.begin(); it != known.end(); ++it) {
    auto existing = base.find(it.key());
    base[it.key()] = existing == base.end() ? it.value() : overlay(*existing, it.value());
  }
  return base;
}

}  // namespace

Manifest manifest_from_json(const json& doc, std::string_view source) {
  const Node top(doc, "", source);
  Manifest m;
  const Node version = top.object("format_version");
  m.format_version.major = static_cast<std::uint16_t>(version.unsigned_int("major", 0xffff));
  m.format_version.minor = static_cast<std::uint16_t>(version.unsigned_int("minor", 0xffff));
  if (m.format_version.major != kFormatMajor)
    throw Error(format_in(
        source, "format version " + std::to_string(m.format_version.major) + "." +
                    std::to_string(m.format_version.minor) +
                    (m.format_version.major > kFormatMajor ? " is newer than" : " is older than") +
                    " this reader (" + std::to_string(kFormatMajor) + ".x)"));

  m.kind = parse_enum(top, "kind", {TraceKind::capture, TraceKind::replay, TraceKind::predicted});
  m.tool_version = top.string("tool_version");
  m.nprocs = static_cast<std::uint32_t>(top.unsigned_int("nprocs", kMaxProcs));
  m.command = top.strings("command");
  m.start_time_unix_ns = top.signed_int("start_time_unix_ns");
  m.start_time_iso = top.string("start_time_iso");
  m.mpi_library_version = top.string("mpi_library_version");

  const Node table = top.object("function_table");
  m.function_table.hash = table.string("hash");
  m.function_table.functions = table.strings("functions");

  m.options = top.object("options").value();

  const Node papi = top.object("papi");
  m.papi.requested = papi.strings("requested");
  m.papi.available = papi.boolean("available");
  m.papi.reason = papi.string("reason");
  m.papi.cpu_model = papi.string("cpu_model");
  m.papi.cpu_mhz = papi.number("cpu_mhz");

  const Node clock = top.object("clock");
  m.clock.source = clock.string("source");
  m.clock.resolution_ns = clock.number("resolution_ns");
  if (clock.has("why")) m.clock.why = clock.string("why");

  const json& ranks = top.get("ranks");
  if (!ranks.is_array()) top.fail("ranks", "expected an array");
  // A replay profile lists only the ranks it replayed (nprocs stays the recorded world size);
  // every other kind lists all of them, in order.
  const bool subset = m.kind == TraceKind::replay;
  if (subset ? (ranks.empty() || ranks.size() > m.nprocs) : ranks.size() != m.nprocs)
    top.fail("nprocs", "is " + std::to_string(m.nprocs) + " but \"ranks\" has " +
                           std::to_string(ranks.size()) + " entries");
  m.ranks.reserve(ranks.size());
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    const Node r(ranks[i], "ranks[" + std::to_string(i) + "]", source);
    RankInfo info = parse_rank(r);
    if (!subset && info.rank != i)
      r.fail(r.join("rank"), "is " + std::to_string(info.rank) + ", expected " + std::to_string(i) +
                                 " (ranks must be listed in order 0..nprocs-1)");
    if (subset && (info.rank >= m.nprocs || (i > 0 && info.rank <= m.ranks.back().rank)))
      r.fail(r.join("rank"), "is " + std::to_string(info.rank) +
                                 " (replayed ranks must be below nprocs, in increasing order)");
    info.raw = ranks[i];
    m.ranks.push_back(std::move(info));
  }
  if (subset && !top.has("replay_of")) top.fail("replay_of", "missing in a replay profile");

  if (top.has("replay_of")) {
    const Node replay = top.object("replay_of");
    m.replay_of = ReplayOf{replay.string("trace"),
                           static_cast<std::uint32_t>(replay.unsigned_int(
                               "rank", std::numeric_limits<std::uint32_t>::max())),
                           0};
    if (replay.has("recording_start_ns"))
      m.replay_of->recording_start_ns = replay.signed_int("recording_start_ns");
  }
  m.raw = doc;
  return m;
}

json manifest_to_json(const Manifest& m) {
  json known = {
      {"format_version", {{"major", m.format_version.major}, {"minor", m.format_version.minor}}},
      {"kind", to_string(m.kind)},
      {"tool_version", m.tool_version},
      {"nprocs", m.nprocs},
      {"command", m.command},
      {"start_time_unix_ns", m.start_time_unix_ns},
      {"start_time_iso", m.start_time_iso},
      {"mpi_library_version", m.mpi_library_version},
      {"function_table",
       {{"hash", m.function_table.hash}, {"functions", m.function_table.functions}}},
      {"papi",
       {{"requested", m.papi.requested},
        {"available", m.papi.available},
        {"reason", m.papi.reason},
        {"cpu_model", m.papi.cpu_model},
        {"cpu_mhz", m.papi.cpu_mhz}}},
      {"clock",
       {{"source", m.clock.source},
        {"resolution_ns", m.clock.resolution_ns},
        {"why", m.clock.why}}},
  };
  json doc = overlay(m.raw.is_object() ? m.raw : json::object(), known);
  // Free-form and array values replace what was loaded rather than merge.
  doc["options"] = m.options.is_object() ? m.options : json::object();
  json ranks = json::array();
  for (const RankInfo& r : m.ranks) {
    json rank = {
        {"rank", r.rank},
        {"host", r.host},
        {"pid", r.pid},
        {"byte_order", to_string(r.byte_order)},
        {"sizes",
         {{"int", r.sizes.int_size},
          {"long", r.sizes.long_size},
          {"pointer", r.sizes.pointer_size},
          {"aint", r.sizes.aint_size},
          {"offset", r.sizes.offset_size},
          {"count", r.sizes.count_size}}},
        {"clock_offset_ns", r.clock_offset_ns},
        {"status", to_string(r.status)},
        {"events", r.events},
        {"payload_bytes", r.payload_bytes},
    };
    if (r.sync_init || r.sync_end) {
      json cs = json::object();
      if (r.sync_init) cs["init"] = sync_to_json(*r.sync_init);
      if (r.sync_end) {
        cs["finalize"] = sync_to_json(*r.sync_end);
        rank["clock_offset_end_ns"] = r.sync_end->offset_ns;  // the key older readers know
      }
      rank["clock_sync"] = std::move(cs);
    }
    json base = r.raw.is_object() ? r.raw : json::object();
    base.erase("clock_sync");  // the typed fields say whether there is one
    ranks.push_back(overlay(std::move(base), rank));
  }
  doc["ranks"] = std::move(ranks);
  if (m.replay_of) {
    json of = {{"trace", m.replay_of->trace}, {"rank", m.replay_of->rank}};
    if (m.replay_of->recording_start_ns != 0)
      of["recording_start_ns"] = m.replay_of->recording_start_ns;
    doc["replay_of"] = overlay(doc.value("replay_of", json::object()), of);
  } else
    doc.erase("replay_of");
  return doc;
}

}  // namespace encore
