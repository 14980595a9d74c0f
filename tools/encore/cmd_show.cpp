// encore show: one line per recorded MPI call, rank after rank.
#include <cstdio>
#include <limits>
#include <memory>
#include <optional>
#include <string>

#include "common.hpp"
#include <fmt/format.h>

#include "encore/error.hpp"
#include "encore/event_reader.hpp"
#include "encore/event_text.hpp"
#include "encore/payload_reader.hpp"

namespace encore::tool {
namespace {

constexpr std::uint64_t kDumpBytes = 64;

struct ShowOptions {
  std::string trace;
  std::optional<std::int64_t> rank;
  std::optional<std::uint32_t> thread;
  std::uint64_t from = 0;
  std::uint64_t count = std::numeric_limits<std::uint64_t>::max();
  bool payload = false;
};

// Shows one rank. Returns false (after printing the problem) if its streams are cut or
// damaged; throws ExitError if they cannot be opened.
bool show_rank(const Trace& t, std::uint32_t rank, const ShowOptions& o) {
  require_rank_files(t, rank);
  std::unique_ptr<RankEventReader> events;
  std::unique_ptr<RankPayloadReader> payload;
  try {
    events = std::make_unique<RankEventReader>(t.dir.events_path(rank));
    // Opened even without --payload: an unreadable payload file makes the trace unreadable.
    payload = std::make_unique<RankPayloadReader>(t.dir.payload_path(rank));
  } catch (const Error& e) {
    throw ExitError(kExitUnreadable, e.what());
  }
  Event ev;
  std::uint64_t shown = 0;
  std::string dump;
  while (shown < o.count && events->next(ev)) {
    if (o.thread && ev.thread != *o.thread) continue;
    if (ev.index < o.from) continue;
    std::string line = describe_event(rank, ev);
    line += '\n';
    std::fwrite(line.data(), 1, line.size(), stdout);
    ++shown;
    if (!o.payload) continue;
    for (const PayloadRef& p : ev.payloads) {
      dump = fmt::format("    payload {}B of {} x{} (thread {} byte {}){}\n", p.bytes,
                         handle_name(HandleKind::datatype, static_cast<std::int64_t>(p.datatype)),
                         p.count, ev.thread, p.offset, p.bytes > kDumpBytes ? ", first 64:" : ":");
      std::vector<std::byte> bytes;
      try {
        bytes = payload->read(ev.thread, p.offset, std::min(p.bytes, kDumpBytes));
      } catch (const Error& e) {
        std::fwrite(dump.data(), 1, dump.size(), stdout);
        print_error(e.what());
        return false;
      }
      dump += hex_dump(bytes, "      ");
      std::fwrite(dump.data(), 1, dump.size(), stdout);
    }
  }
  if (shown >= o.count) return true;  // stopped early on purpose
  if (!events->complete()) {
    print_error(events->problem().empty() ? events->file().path() + ": stream ended early"
                                          : events->problem());
    return false;
  }
  return true;
}

int show(const ShowOptions& o) {
  const Trace t = open_trace(o.trace);
  for (const std::uint32_t r : selected_ranks(t, o.rank)) {
    if (!o.rank) {
      const auto& info = *t.manifest.rank_info(r);
      fmt::print("== rank {} ({}, pid {}, {} events, {}) ==\n", r, info.host, info.pid, info.events,
                 to_string(info.status));
    }
    if (!show_rank(t, r, o)) return kExitTraceProblem;
  }
  std::fflush(stdout);
  return kExitOk;
}

}  // namespace

// A negative value would wrap around in the unsigned fields: refused as text first.
const CLI::Validator kNotNegative(
    [](const std::string& text) {
      return text.starts_with('-') ? std::string("expected a number of 0 or more") : std::string();
    },
    "N >= 0");

Subcommand add_show(CLI::App& parent) {
  auto o = std::make_shared<ShowOptions>();
  CLI::App* app = parent.add_subcommand("show", "Print every recorded MPI call, one per line.");
  app->add_option("trace", o->trace, "Trace directory.")->required();
  app->add_option("--rank", o->rank, "Only this rank (default: all, one after another).");
  app->add_option("--thread", o->thread, "Only this recording thread.")->check(kNotNegative);
  app->add_option("--from", o->from, "Skip events whose index in their thread is below N.")
      ->check(kNotNegative);
  app->add_option("--count", o->count, "Show at most M events per rank.")->check(kNotNegative);
  app->add_flag("--payload", o->payload,
                "Add a hex dump of the first 64 bytes of every received payload.");
  app->footer(std::string(kExitCodesFooter) +
              "\nLine format: r<rank> t<thread> #<index> <function>  <start since the rank's "
              "start> +<duration>  <arguments> [rc=] [recv <bytes>] [sent <bytes> hash=] "
              "[site=] [stall=]. A cut or damaged stream is shown up to the damage, then "
              "reported on stderr (exit 1).");
  return {app, [o] { return show(*o); }};
}

}  // namespace encore::tool
