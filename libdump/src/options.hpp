// Capture options. Each is an environment variable, so that `encore record` (which sets them
// from its flags) and a program linked with -lencore-dump behave the same.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "encore/byte_order.hpp"
#include "encore/rank_list.hpp"

namespace encore::dump {

enum class PayloadOrder : std::uint8_t { native, little, big };
// When chunks are compressed: while the program runs (on the writer thread), or once it is done
// (written raw, packed at MPI_Finalize). `automatic` picks `after` where the node's ranks leave no
// core for the writer threads, whose compression would otherwise slow the ranks being timed.
enum class CompressWhen : std::uint8_t { automatic, during, after };

struct Options {
  std::string trace_dir;                 // ENCORE_TRACE_DIR (default: encore-trace)
  std::string payload_ranks = "all";     // ENCORE_PAYLOAD_RANKS: all | none | list like 0,2-5
  RankList payload_list;                 // the same, parsed (encore/rank_list.hpp)
  bool callsites = false;                // ENCORE_CALLSITES=1
  int callsite_depth = 8;                // ENCORE_CALLSITE_DEPTH
  std::vector<std::string> papi_events;  // ENCORE_PAPI_EVENTS=PAPI_TOT_INS,PAPI_TOT_CYC
  PayloadOrder payload_order = PayloadOrder::native;  // ENCORE_PAYLOAD_ORDER
  int event_level = 3;  // ENCORE_ZSTD_LEVEL (events); payload uses min(level, 1)
  int payload_level = 1;
  CompressWhen compress = CompressWhen::automatic;  // ENCORE_COMPRESS=auto|during|after
  std::uint64_t memory_budget = 64ull << 20;        // ENCORE_MEMORY_MB
  std::uint64_t flush_interval_ns = 1'000'000'000;  // ENCORE_FLUSH_MS
  bool send_hashes = true;                          // ENCORE_SEND_HASH=0 disables
  bool shared_clock = true;  // ENCORE_CLOCK_SYNC=auto|round-trips (clock_sync.hpp)
  bool quiet = false;        // ENCORE_QUIET=1: no summary line
  bool disabled = false;     // ENCORE_DISABLE=1: pass every call straight through
  // ENCORE_LEAN=0: every call through a Call (no lean polls, no light calls; for tests)
  bool lean = true;

  // Reads the environment; a malformed value is reported on stderr and the default kept.
  static Options from_environment();
  bool records_payload_of(int rank) const;
  ByteOrder payload_byte_order() const;
};

}  // namespace encore::dump
