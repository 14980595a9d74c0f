// encore check: validate a trace completely (manifest, every chunk, every event, payload
// references) and say per rank whether it is complete, and if not, where it breaks.
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common.hpp"
#include <fmt/format.h>

#include "encore/error.hpp"
#include "encore/event_reader.hpp"
#include "encore/stream_file.hpp"
#include "encore/varint.hpp"

namespace encore::tool {
namespace {

// libdump's end status in the trailer body (first uvarint).
constexpr const char* kEndStatus[] = {"complete", "aborted", "exited", "crashed"};

struct ThreadTotals {
  std::uint64_t events = 0;
  std::uint64_t payload = 0;  // bytes: referenced by events / held by the payload stream
};

struct Trailer {
  std::uint64_t status = 0;
  std::map<std::uint16_t, ThreadTotals> threads;  // by thread index
};

// The first problem found in one rank.
struct Problem {
  std::string state;   // "truncated", "corrupt", "incomplete", ...
  std::string where;   // " at event N (chunk i, offset o)" or ""
  std::string reason;  // short, for the rank line
  std::string full;    // one line naming the file, for stderr
  bool unreadable = false;
};

struct RankResult {
  std::uint64_t events = 0;
  std::uint64_t chunks = 0;  // data chunks in both files
  std::uint64_t payload_bytes = 0;
  std::optional<Problem> problem;
  std::vector<std::string> warnings;  // for stderr; they do not make the rank incomplete
};

// "<path>: chunk <i>: <what> at offset <n>" -> "<file name>: <what>".
std::string short_reason(const std::string& message, const std::string& path,
                         const Damage* damage) {
  std::string s = message;
  if (s.rfind(path + ": ", 0) == 0) s = s.substr(path.size() + 2);
  if (damage) {
    const std::string chunk = "chunk " + std::to_string(damage->chunk_index) + ": ";
    if (s.rfind(chunk, 0) == 0) s = s.substr(chunk.size());
    const std::string at = " at offset " + std::to_string(damage->offset);
    if (s.size() > at.size() && s.compare(s.size() - at.size(), at.size(), at) == 0)
      s.resize(s.size() - at.size());
  }
  return std::filesystem::path(path).filename().string() + ": " + s;
}

std::string state_of(DamageKind kind) {
  return kind == DamageKind::truncated ? "truncated" : "corrupt";
}

std::optional<Trailer> parse_trailer(std::span<const std::byte> body) {
  if (body.empty()) return std::nullopt;
  try {
    ByteReader in(body);
    Trailer t;
    t.status = in.read_uvarint();
    const std::uint64_t n = in.read_uvarint();
    if (n > body.size()) return std::nullopt;
    for (std::uint64_t i = 0; i < n; ++i) {
      ThreadTotals& tt = t.threads[static_cast<std::uint16_t>(i)];
      tt.events = in.read_uvarint();
      tt.payload = in.read_uvarint();
      in.read_uvarint();  // overhead
      in.read_uvarint();  // stalls
    }
    return t;
  } catch (const Error&) {
    return std::nullopt;
  }
}

Problem unreadable(const std::string& message) {
  return {"unreadable", "", message, message, true};
}

// Walks every chunk (for damage, with its chunk index and offset) and, in lockstep, decodes
// every event with RankEventReader (so the event encoding is known in one place only). Fills
// per-thread event counts and the payload bytes the events refer to.
std::optional<Problem> check_events(const std::filesystem::path& path, RankResult& out,
                                    std::map<std::uint16_t, ThreadTotals>& threads,
                                    std::optional<Trailer>& trailer) {
  std::unique_ptr<StreamFileReader> walker;
  std::unique_ptr<RankEventReader> decoder;
  try {
    walker = std::make_unique<StreamFileReader>(path);
    decoder = std::make_unique<RankEventReader>(path);
  } catch (const Error& e) {
    return unreadable(e.what());
  }
  StreamFileReader& r = *walker;
  const std::string file = r.path();
  struct Pos {
    std::uint64_t end_ns = 0;
    std::uint64_t payload = 0;
  };
  std::map<std::uint16_t, Pos> pos;
  Chunk c;
  const auto at_event = [&](const std::string& state, std::uint64_t chunk, std::uint64_t offset,
                            const std::string& what) {
    // A decoder message has an offset of its own (within the event): the chunk's goes beside
    // the chunk then, so that neither reads as the other.
    const bool own_offset = what.find(" at offset ") != std::string::npos;
    return Problem{
        state, fmt::format(" at event {} (chunk {}, offset {})", out.events, chunk, offset),
        std::filesystem::path(file).filename().string() + ": " + what,
        own_offset ? format_in(file, fmt::format("chunk {} at offset {}: {}", chunk, offset, what))
                   : format_at(file, fmt::format("chunk {}: {}", chunk, what), offset)};
  };
  // The decoder's message without its "<path>: " prefix and its chunk, which at_event names.
  const auto decoder_problem = [&] {
    std::string m = decoder->problem();
    if (m.rfind(file + ": ", 0) == 0) m = m.substr(file.size() + 2);
    for (const char* sep : {": ", ", ", " has "}) {
      const std::string chunk = "chunk " + std::to_string(c.index) + sep;
      if (m.rfind(chunk, 0) == 0) m = m.substr(chunk.size());
    }
    return m.empty() ? std::string("the event decoder stopped early") : m;
  };
  Event ev;
  for (;;) {
    const ReadResult res = r.next(c);
    if (res == ReadResult::damage) {
      const Damage& d = r.damage();
      return Problem{
          state_of(d.kind),
          fmt::format(" at event {} (chunk {}, offset {})", out.events, d.chunk_index, d.offset),
          short_reason(d.message, file, &d), d.message};
    }
    if (res == ReadResult::end) {
      if (!r.saw_trailer())
        return at_event("incomplete", r.chunk_index(), r.offset(),
                        "stream ends without its trailer (the capture did not finish)");
      if (decoder->next(ev))
        return at_event("corrupt", r.chunk_index(), r.offset(), "events after the trailer");
      return std::nullopt;
    }
    const ChunkHeader& h = c.header;
    if (h.kind == ChunkKind::trailer) {
      trailer = parse_trailer(c.data);
      continue;
    }
    if (h.kind != ChunkKind::events) continue;
    out.chunks += 1;
    Pos& p = pos[h.thread];
    if (h.base != p.end_ns || h.aux != p.payload) {
      return at_event("corrupt", c.index, c.offset,
                      fmt::format("thread {} chunk starts at time {} and payload byte {}, its "
                                  "previous events end at {} and {}",
                                  h.thread, h.base, h.aux, p.end_ns, p.payload));
    }
    for (std::uint32_t k = 0; k < h.count; ++k) {
      if (!decoder->next(ev)) return at_event("corrupt", c.index, c.offset, decoder_problem());
      if (ev.thread != h.thread)
        return at_event("corrupt", c.index, c.offset, "decoder and chunk disagree on the thread");
      p.end_ns = ev.end_ns;
      for (const PayloadRef& ref : ev.payloads) p.payload = ref.offset + ref.bytes;
      out.events += 1;
      threads[h.thread].events += 1;
    }
    threads[h.thread].payload = p.payload;
    if (!decoder->problem().empty())
      return at_event("corrupt", c.index, c.offset, decoder_problem());
  }
}

// Walks (and verifies) every payload chunk. Fills per-thread stream lengths.
std::optional<Problem> check_payload(const std::filesystem::path& path, RankResult& out,
                                     std::map<std::uint16_t, ThreadTotals>& threads) {
  std::unique_ptr<StreamFileReader> reader;
  try {
    reader = std::make_unique<StreamFileReader>(path);
  } catch (const Error& e) {
    return unreadable(e.what());
  }
  StreamFileReader& r = *reader;
  const std::string file = r.path();
  if (r.header().kind != StreamKind::payload)
    return unreadable(format_in(file, "not a payload stream"));
  Chunk c;
  for (;;) {
    const ReadResult res = r.next(c);
    if (res == ReadResult::damage) {
      const Damage& d = r.damage();
      return Problem{"payload " + state_of(d.kind),
                     fmt::format(" (chunk {}, offset {})", d.chunk_index, d.offset),
                     short_reason(d.message, file, &d), d.message};
    }
    if (res == ReadResult::end) {
      if (r.saw_trailer()) return std::nullopt;
      const std::string what = "stream ends without its trailer (the capture did not finish)";
      return Problem{
          "payload incomplete", fmt::format(" (chunk {}, offset {})", r.chunk_index(), r.offset()),
          std::filesystem::path(file).filename().string() + ": " + what,
          format_at(file, fmt::format("chunk {}: {}", r.chunk_index(), what), r.offset())};
    }
    if (c.header.kind != ChunkKind::payload) continue;
    out.chunks += 1;
    out.payload_bytes += c.header.raw_size;
    threads[c.header.thread].payload = c.header.first + c.header.raw_size;
  }
}

RankResult check_rank(const Trace& t, std::uint32_t rank) {
  RankResult out;
  for (const auto kind : {StreamKind::events, StreamKind::payload}) {
    std::error_code ec;
    const auto p = t.dir.stream_path(rank, kind);
    if (!std::filesystem::is_regular_file(p, ec)) {
      out.problem =
          unreadable(format_in(p.string(), "missing " + std::string(to_string(kind)) +
                                               " stream of rank " + std::to_string(rank)));
      return out;
    }
  }
  const auto events_path = t.dir.events_path(rank);
  const auto payload_path = t.dir.payload_path(rank);
  std::map<std::uint16_t, ThreadTotals> referenced;
  std::map<std::uint16_t, ThreadTotals> held;
  std::optional<Trailer> trailer;
  auto ev_problem = check_events(events_path, out, referenced, trailer);
  auto pl_problem = check_payload(payload_path, out, held);
  // Unreadable files first, then damage in events, then in payload.
  for (const bool unreadable_only : {true, false}) {
    for (auto* p : {&ev_problem, &pl_problem}) {
      if (*p && (!unreadable_only || (*p)->unreadable)) {
        out.problem = std::move(*p);
        return out;
      }
    }
  }

  const std::string ev_file = events_path.filename().string();
  const auto mismatch = [&](const std::string& file, const std::string& what) {
    return Problem{"corrupt", "", file + ": " + what,
                   format_in((t.dir.root() / file).string(), what)};
  };
  // Every payload byte an event refers to must be in the payload stream, and (both streams
  // being complete) no more.
  for (const auto& [thread, refs] : referenced) {
    const std::uint64_t have = held.count(thread) ? held.at(thread).payload : 0;
    if (refs.payload != have) {
      out.problem = mismatch(payload_path.filename().string(),
                             fmt::format("thread {}: events refer to {} payload bytes, the "
                                         "payload stream holds {}",
                                         thread, refs.payload, have));
      return out;
    }
  }
  for (const auto& [thread, h] : held) {
    if (h.payload != 0 && !referenced.count(thread)) {
      out.problem = mismatch(
          payload_path.filename().string(),
          fmt::format("thread {}: {} payload bytes no event refers to", thread, h.payload));
      return out;
    }
  }
  if (trailer) {
    for (const auto& [thread, tt] : trailer->threads) {
      const ThreadTotals got = referenced.count(thread) ? referenced.at(thread) : ThreadTotals{};
      if (tt.events != got.events || tt.payload != got.payload) {
        out.problem =
            mismatch(ev_file, fmt::format("trailer counts {} events and {} payload "
                                          "bytes for thread {}, the stream holds {} and {}",
                                          tt.events, tt.payload, thread, got.events, got.payload));
        return out;
      }
    }
    if (trailer->status != 0) {
      const std::string status = trailer->status < std::size(kEndStatus)
                                     ? kEndStatus[trailer->status]
                                     : "unknown (" + std::to_string(trailer->status) + ")";
      out.problem =
          Problem{"ended early", "", ev_file + ": the capture ended with status " + status,
                  format_in(events_path.string(), "the capture ended with status " + status)};
      return out;
    }
  }
  // The manifest's counts are a summary written by rank 0; the streams, verified against
  // their own trailers, are authoritative. A disagreement is worth a warning, not a failure.
  const RankInfo& info = *t.manifest.rank_info(rank);
  if (info.status == RankStatus::complete && info.events != out.events) {
    out.warnings.push_back(format_in(t.dir.manifest_path().string(),
                                     fmt::format("warning: ranks[{}].events is {}, the events "
                                                 "stream holds {}",
                                                 rank, info.events, out.events)));
  }
  return out;
}

int check(const std::string& trace) {
  const Trace t = open_trace(trace);
  bool any_unreadable = false;
  bool any_problem = false;
  for (const std::uint32_t r : selected_ranks(t, std::nullopt)) {
    const RankResult res = check_rank(t, r);
    for (const auto& w : res.warnings) print_error(w);
    if (!res.problem) {
      fmt::print("rank {}: complete ({} events, {} chunks, {} payload bytes)\n", r, res.events,
                 res.chunks, res.payload_bytes);
      continue;
    }
    const Problem& p = *res.problem;
    if (p.unreadable) {
      fmt::print("rank {}: unreadable: {}\n", r, p.reason);
      any_unreadable = true;
    } else {
      fmt::print("rank {}: {}{}: {}\n", r, p.state, p.where, p.reason);
      any_problem = true;
    }
    print_error(p.full);
  }
  std::fflush(stdout);
  if (any_unreadable) return kExitUnreadable;
  return any_problem ? kExitTraceProblem : kExitOk;
}

}  // namespace

Subcommand add_check(CLI::App& parent) {
  auto o = std::make_shared<std::string>();
  CLI::App* app = parent.add_subcommand(
      "check",
      "Validate a trace: manifest, every chunk and checksum, every event, payload "
      "references. One line per rank.");
  app->add_option("trace", *o, "Trace directory.")->required();
  app->footer(std::string(kExitCodesFooter) +
              "\ncheck exits 0 only if every rank is complete. Per rank it prints 'rank R: "
              "complete (E events, C chunks, P payload bytes)' or 'rank R: <truncated|corrupt|"
              "incomplete|...> at event N (chunk C, offset O): <reason>'; each problem is also "
              "reported on stderr.");
  return {app, [o] { return check(*o); }};
}

}  // namespace encore::tool
