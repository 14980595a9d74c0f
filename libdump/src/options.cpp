#include "options.hpp"

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace encore::dump {
namespace {

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

bool parse_int(std::string_view text, long long& out) {
  const auto* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, out);
  return ec == std::errc() && ptr == end;
}

template <class T>
void read_number(const char* name, T& field, long long lo, long long hi) {
  const char* v = env(name);
  if (!v) return;
  long long value = 0;
  if (!parse_int(v, value) || value < lo || value > hi) {
    std::fprintf(stderr, "encore: ignoring %s=%s (expected an integer in [%lld, %lld])\n", name, v,
                 lo, hi);
    return;
  }
  field = static_cast<T>(value);
}

bool read_flag(const char* name, bool fallback) {
  const char* v = env(name);
  if (!v) return fallback;
  const std::string_view s(v);
  return !(s == "0" || s == "no" || s == "off" || s == "false");
}

}  // namespace

Options Options::from_environment() {
  Options o;
  if (const char* v = env("ENCORE_TRACE_DIR"))
    o.trace_dir = v;
  else
    o.trace_dir = "encore-trace";
  if (const char* v = env("ENCORE_PAYLOAD_RANKS")) {
    if (const std::string why = RankList::parse(v, o.payload_list); why.empty()) {
      o.payload_ranks = v;
    } else {
      std::fprintf(stderr, "encore: ignoring ENCORE_PAYLOAD_RANKS=%s (%s)\n", v, why.c_str());
      RankList::parse("all", o.payload_list);
    }
  }
  o.callsites = read_flag("ENCORE_CALLSITES", false);
  read_number("ENCORE_CALLSITE_DEPTH", o.callsite_depth, 1, 64);
  if (const char* v = env("ENCORE_PAPI_EVENTS")) {
    std::string_view s(v);
    while (!s.empty()) {
      const auto comma = s.find(',');
      if (auto name = s.substr(0, comma); !name.empty()) o.papi_events.emplace_back(name);
      s = comma == std::string_view::npos ? std::string_view{} : s.substr(comma + 1);
    }
  }
  if (const char* v = env("ENCORE_PAYLOAD_ORDER")) {
    const std::string_view s(v);
    if (s == "little")
      o.payload_order = PayloadOrder::little;
    else if (s == "big")
      o.payload_order = PayloadOrder::big;
    else if (s != "native")
      std::fprintf(stderr, "encore: ignoring ENCORE_PAYLOAD_ORDER=%s (native, little or big)\n", v);
  }
  if (const char* v = env("ENCORE_COMPRESS")) {
    const std::string_view s(v);
    if (s == "during")
      o.compress = CompressWhen::during;
    else if (s == "after")
      o.compress = CompressWhen::after;
    else if (s != "auto")
      std::fprintf(stderr, "encore: ignoring ENCORE_COMPRESS=%s (auto, during or after)\n", v);
  }
  if (const char* v = env("ENCORE_CLOCK_SYNC")) {
    const std::string_view s(v);
    if (s == "round-trips")
      o.shared_clock = false;
    else if (s != "auto")
      std::fprintf(stderr, "encore: ignoring ENCORE_CLOCK_SYNC=%s (auto or round-trips)\n", v);
  }
  int level = -1000;
  read_number("ENCORE_ZSTD_LEVEL", level, -7, 19);
  if (level != -1000) {
    o.event_level = level;
    o.payload_level = level < 1 ? level : 1;
  }
  long long mb = 64;
  read_number("ENCORE_MEMORY_MB", mb, 16, 1 << 20);
  o.memory_budget = static_cast<std::uint64_t>(mb) << 20;
  long long ms = 1000;
  read_number("ENCORE_FLUSH_MS", ms, 10, 3'600'000);
  o.flush_interval_ns = static_cast<std::uint64_t>(ms) * 1'000'000ull;
  o.send_hashes = read_flag("ENCORE_SEND_HASH", true);
  o.quiet = read_flag("ENCORE_QUIET", false);
  o.disabled = read_flag("ENCORE_DISABLE", false);
  o.lean = read_flag("ENCORE_LEAN", true);
  return o;
}

bool Options::records_payload_of(int rank) const { return payload_list.contains(rank); }

ByteOrder Options::payload_byte_order() const {
  switch (payload_order) {
    case PayloadOrder::little:
      return ByteOrder::little;
    case PayloadOrder::big:
      return ByteOrder::big;
    default:
      return host_byte_order();
  }
}

}  // namespace encore::dump
