// encore digest: FNV-1a 64 over the received bytes of each rank, to compare with what a
// program computed itself (the examples print "digest rank=R recv=<hex> compute=<hex>").
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "common.hpp"
#include <fmt/format.h>

#include "encore/byte_order.hpp"
#include "encore/error.hpp"
#include "encore/event_reader.hpp"
#include "encore/payload_reader.hpp"

namespace encore::tool {
namespace {

constexpr std::uint64_t kFnvOffsetBasis = 0xcbf29ce484222325ull;
constexpr std::uint64_t kFnvPrime = 0x100000001b3ull;

struct DigestOptions {
  std::string trace;
  std::optional<std::int64_t> rank;
  std::string until_last;
  bool as_stored = false;
};

std::unique_ptr<RankEventReader> open_events(const Trace& t, std::uint32_t rank) {
  try {
    return std::make_unique<RankEventReader>(t.dir.events_path(rank));
  } catch (const Error& e) {
    throw ExitError(kExitUnreadable, e.what());
  }
}

[[noreturn]] void stream_problem(const RankEventReader& r) {
  throw ExitError(kExitTraceProblem,
                  r.problem().empty() ? r.file().path() + ": stream ended early" : r.problem());
}

// Position (in file order, from 0) of the last event calling `function`, or the number of
// events if there is none.
std::uint64_t last_call(const Trace& t, std::uint32_t rank, std::uint16_t function) {
  auto reader = open_events(t, rank);
  Event ev;
  std::uint64_t n = 0;
  std::optional<std::uint64_t> last;
  while (reader->next(ev)) {
    if (ev.function == function) last = n;
    ++n;
  }
  if (!reader->complete()) stream_problem(*reader);
  return last.value_or(n);
}

std::uint64_t digest_rank(const Trace& t, std::uint32_t rank, std::optional<std::uint16_t> until,
                          bool as_stored) {
  require_rank_files(t, rank);
  const std::uint64_t stop = until ? last_call(t, rank, *until) : UINT64_MAX;
  auto reader = open_events(t, rank);
  std::unique_ptr<RankPayloadReader> payload;
  try {
    payload = std::make_unique<RankPayloadReader>(t.dir.payload_path(rank));
  } catch (const Error& e) {
    throw ExitError(kExitUnreadable, e.what());
  }
  std::uint64_t h = kFnvOffsetBasis;
  const auto sink = [&h](std::span<const std::byte> bytes) {
    for (const std::byte b : bytes) {
      h ^= std::to_integer<std::uint64_t>(b);
      h *= kFnvPrime;
    }
  };
  // Payloads recorded in the other byte order are converted back first, element by element
  // with the datatype's signature, so the digest is the one the program computed.
  const bool convert = !as_stored && payload->byte_order() != host_byte_order();
  std::unordered_map<std::uint64_t, std::vector<SignatureRun>> signatures;
  std::vector<std::byte> buffer;
  const auto collect = [&buffer](std::span<const std::byte> bytes) {
    buffer.insert(buffer.end(), bytes.begin(), bytes.end());
  };
  Event ev;
  for (std::uint64_t n = 0; n < stop && reader->next(ev); ++n) {
    for (const DatatypeSignature& sig : ev.signatures) {
      auto& runs = signatures[sig.datatype];
      runs.clear();
      for (const auto& [size, repeat] : sig.runs) runs.push_back({size, repeat});
    }
    for (const PayloadRef& p : ev.payloads) {
      try {
        if (!convert) {
          payload->read(ev.thread, p.offset, p.bytes, sink);
          continue;
        }
        buffer.clear();
        payload->read(ev.thread, p.offset, p.bytes, collect);
        // Where, for a message about the signature (the swap itself names none of these).
        const auto where = [&] {
          return fmt::format("{}: rank {} event {}: datatype #{}",
                             t.dir.payload_path(rank).string(), rank, ev.index, p.datatype);
        };
        const auto it = signatures.find(p.datatype);
        if (it == signatures.end() || it->second.empty())
          throw Error(where() +
                      ": no element signature, the payload cannot be converted to this host's "
                      "byte order");
        try {
          swap_elements(buffer, it->second);
        } catch (const Error& e) {
          throw Error(where() + ": " + e.what());
        }
        sink(buffer);
      } catch (const Error& e) {
        throw ExitError(kExitTraceProblem, e.what());
      }
    }
  }
  if (stop == UINT64_MAX && !reader->complete()) stream_problem(*reader);
  return h;
}

int digest(const DigestOptions& o) {
  const Trace t = open_trace(o.trace);
  std::optional<std::uint16_t> until;
  if (!o.until_last.empty()) {
    const FunctionInfo* f = find_function(o.until_last);
    if (!f) f = find_function("MPI_" + o.until_last);
    if (!f) throw ExitError(kExitUsage, "--until-last " + o.until_last + ": no such MPI function");
    until = static_cast<std::uint16_t>(f - function_table().data());
  }
  for (const std::uint32_t r : selected_ranks(t, o.rank)) {
    fmt::print("digest rank={} recv={:016x}\n", r, digest_rank(t, r, until, o.as_stored));
    std::fflush(stdout);
  }
  return kExitOk;
}

}  // namespace

Subcommand add_digest(CLI::App& parent) {
  auto o = std::make_shared<DigestOptions>();
  CLI::App* app = parent.add_subcommand(
      "digest", "FNV-1a 64 digest of every rank's received bytes, in call order.");
  app->add_option("trace", o->trace, "Trace directory.")->required();
  app->add_option("--rank", o->rank, "Only this rank.");
  app->add_option("--until-last", o->until_last,
                  "Stop before the rank's last call of this function (e.g. MPI_Gather: the "
                  "examples report their digests with a final gather they do not hash).");
  app->add_flag("--as-stored", o->as_stored,
                "Hash the bytes as stored, without converting a payload recorded in the other "
                "byte order (ENCORE_PAYLOAD_ORDER) back to this host's.");
  app->footer(std::string(kExitCodesFooter) +
              "\nPrints 'digest rank=R recv=<16 hex digits>' per rank. Payloads missing from "
              "the trace (cut or damaged streams) are an error (exit 1), not a short digest.");
  return {app, [o] { return digest(*o); }};
}

}  // namespace encore::tool
