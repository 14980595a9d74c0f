// Chrome trace-event JSON (what Perfetto and chrome://tracing load): per rank a process, per
// thread a track; a complete event ("X") per MPI call and per compute segment, and a flow
// ("s" at the send, "f" at the receive) per point-to-point message. Ranks are written one
// after the other; a message's flow id is computed on both sides from its channel (sender,
// receiver, tag, communicator) and its sequence number on that channel, which MPI's
// non-overtaking rule makes the same at both ends. A cancelled send or receive moved no
// message and has no flow; a first pass over each rank finds them (a send's flow starts where
// it is posted, before its completion says it was cancelled).
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>

#include "call_args.hpp"
#include "cancelled_requests.hpp"
#include "exporters.hpp"
#include "matched_messages.hpp"
#include "message_sizes.hpp"
#include "output_file.hpp"
#include "progress.hpp"
#include "timeline.hpp"
#include <fmt/format.h>

#include "encore/error.hpp"

namespace encore::exporter {
namespace {

// Microseconds with nanosecond digits ("12.345"), the unit of "ts" and "dur".
std::string micros(std::int64_t ns) {
  const bool neg = ns < 0;
  const std::uint64_t a = neg ? static_cast<std::uint64_t>(-ns) : static_cast<std::uint64_t>(ns);
  return fmt::format("{}{}.{:03}", neg ? "-" : "", a / 1000, a % 1000);
}

// JSON string contents (names come from the trace: hosts may hold anything).
std::string escaped(std::string_view s) {
  std::string out;
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
    } else {
      out += c;
    }
  }
  return out;
}

std::uint64_t mix(std::uint64_t x) {  // splitmix64's finaliser
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

class ChromeWriter {
 public:
  ChromeWriter(const std::filesystem::path& out, std::set<std::string>& notes)
      : out_(out), notes_(notes) {
    out_.write("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
  }

  void rank(const TraceInput& trace, std::uint32_t r, Progress& progress, ExportStats& stats) {
    const auto& info = *trace.manifest.rank_info(r);  // r is one of the listed ranks
    record("{}", fmt::format(
                     R"({{"name":"process_name","ph":"M","pid":{},"args":{{"name":"rank {}{}"}}}})",
                     r, r, info.host.empty() ? "" : " (" + escaped(info.host) + ")"));
    record(R"({{"name":"process_sort_index","ph":"M","pid":{},"args":{{"sort_index":{}}}}})", r, r);
    MessageSizes sizes(r, trace.manifest.nprocs);
    std::set<std::uint16_t> threads;
    std::unordered_map<std::uint64_t, std::uint64_t> irecv_comm;  // outstanding receives
    channels_.clear();
    cancelled_ = cancelled_requests(trace, r);
    messages_ = MatchedMessages();
    RankTimeline timeline(trace, r);
    TimelineCall call;
    while (timeline.next(call)) {
      progress.advance();
      ++stats.events;
      const Event& e = *call.event;
      sizes.observe(e);
      matched_ = messages_.observe(e);
      if (threads.insert(e.thread).second)
        record(
            R"({{"name":"thread_name","ph":"M","pid":{},"tid":{},"args":{{"name":"thread {}"}}}})",
            r, e.thread, e.thread);
      if (call.compute_ns > 0)
        record(
            R"({{"name":"compute","cat":"compute","ph":"X","pid":{},"tid":{},"ts":{},"dur":{}}})",
            r, e.thread, micros(call.compute_start_ns),
            micros(static_cast<std::int64_t>(call.compute_ns)));
      const MessageBytes moved = e.rc == 0 ? message_bytes(sizes.context(), e) : MessageBytes{};
      record(
          R"({{"name":"{}","cat":"{}","ph":"X","pid":{},"tid":{},"ts":{},"dur":{},"args":{{"index":{}{}{}{}}}}})",
          e.info().name, category_name(e.info().category), r, e.thread, micros(call.start_ns),
          micros(call.end_ns - call.start_ns), e.index,
          moved.sent ? fmt::format(",\"sent_bytes\":{}", moved.sent) : std::string(),
          moved.received ? fmt::format(",\"received_bytes\":{}", moved.received) : std::string(),
          e.rc != 0 ? fmt::format(",\"rc\":{}", e.rc) : std::string());
      if (e.rc == 0) flows(e, call, r, sizes, irecv_comm);
    }
    if (auto note = timeline.end_note(); !note.empty())
      stats.problems.push_back(note + "; exported up to there");
  }

  void finish(ExportStats& stats) {
    out_.write("\n]}\n");
    out_.close();
    stats.records = records_;
  }

 private:
  template <typename... T>
  void record(fmt::format_string<T...> json, T&&... args) {
    if (records_++) out_.write(",\n");
    out_.print(json, std::forward<T>(args)...);
  }

  static CancelledRequests cancelled_requests(const TraceInput& trace, std::uint32_t r) {
    CancelledRequests out;
    RankTimeline timeline(trace, r);
    TimelineCall call;
    while (timeline.next(call)) out.observe(*call.event);
    return out;
  }

  // Whether `e`, a nonblocking send or receive, was cancelled.
  bool cancelled(const Event& e) const {
    return cancelled_.contains(e, RequestRef{false, e.thread, e.index});
  }

  // Flow id of the next message on a channel, seen from one end (counted apart: a message a
  // rank sends itself is seen from both ends in the same rank's pass).
  std::uint64_t next_flow(char end, std::int64_t src, std::int64_t dst, std::int64_t tag,
                          std::uint64_t comm) {
    const auto key = std::make_tuple(end, src, dst, tag, comm);
    const std::uint64_t seq = channels_[key]++;
    std::uint64_t h = mix(static_cast<std::uint64_t>(src) + 0x9e3779b97f4a7c15ULL);
    h = mix(h ^ static_cast<std::uint64_t>(dst));
    h = mix(h ^ static_cast<std::uint64_t>(tag));
    h = mix(h ^ comm);
    h = mix(h ^ seq);
    return h & ((1ULL << 53) - 1);  // exact in a JavaScript number
  }

  void flow(char phase, std::uint64_t id, std::uint32_t r, const Event& e, std::int64_t ts) {
    record(R"({{"name":"message","cat":"message","ph":"{}",{}"id":{},"pid":{},"tid":{},"ts":{}}})",
           phase, phase == 'f' ? "\"bp\":\"e\"," : "", id, r, e.thread, micros(ts));
  }

  void send(const Event& e, const TimelineCall& call, std::uint32_t r, MessageSizes& sizes,
            std::string_view dest, std::string_view tag) {
    const auto comm = static_cast<std::uint64_t>(scalar_arg(e, "comm", 0));
    const std::int64_t peer = scalar_arg(e, dest, kProcNull);
    if (peer == kProcNull) return;
    const std::int64_t w = sizes.world_rank(comm, peer);
    if (w < 0) {
      notes_.insert("messages on unknown communicators have no flow arrows");
      return;
    }
    flow('s', next_flow('s', r, w, scalar_arg(e, tag, 0), sizes.comm_key(comm)), r, e,
         call.start_ns);
  }

  void receive(const Event& e, const TimelineCall& call, std::uint32_t r, MessageSizes& sizes,
               std::uint64_t comm, const StatusRecord* st) {
    if (!st || (st->source < 0)) return;  // PROC_NULL, or status not recorded
    const std::int64_t w = sizes.world_rank(comm, st->source);
    if (w < 0) {
      notes_.insert("messages on unknown communicators have no flow arrows");
      return;
    }
    flow('f', next_flow('f', w, r, st->tag, sizes.comm_key(comm)), r, e, call.start_ns);
  }

  void flows(const Event& e, const TimelineCall& call, std::uint32_t r, MessageSizes& sizes,
             std::unordered_map<std::uint64_t, std::uint64_t>& irecv_comm) {
    const std::string_view name = e.info().name;
    auto base = name.ends_with("_c") ? name.substr(0, name.size() - 2) : name;
    const ArgValue* status = recorded_arg(e, "status");
    const StatusRecord* st = status && !status->statuses.empty() ? &status->statuses[0] : nullptr;
    const auto comm = static_cast<std::uint64_t>(scalar_arg(e, "comm", 0));
    if (base == "MPI_Send" || base == "MPI_Ssend" || base == "MPI_Rsend" || base == "MPI_Bsend" ||
        base == "MPI_Isend" || base == "MPI_Issend" || base == "MPI_Irsend" ||
        base == "MPI_Ibsend") {
      if (!cancelled(e)) send(e, call, r, sizes, "dest", "tag");
    } else if (base == "MPI_Recv") {
      if (scalar_arg(e, "source", kProcNull) != kProcNull) receive(e, call, r, sizes, comm, st);
    } else if (base == "MPI_Sendrecv" || base == "MPI_Sendrecv_replace") {
      send(e, call, r, sizes, "dest", "sendtag");
      if (scalar_arg(e, "source", kProcNull) != kProcNull) receive(e, call, r, sizes, comm, st);
    } else if (base == "MPI_Irecv") {
      // A receive from MPI_PROC_NULL completes with an empty status (source 0): no message.
      if (scalar_arg(e, "source", kProcNull) != kProcNull && !cancelled(e))
        irecv_comm[event_key(e)] = comm;
    } else if (base == "MPI_Mrecv") {
      // The message an MPI_Mprobe matched (none for MPI_MESSAGE_NO_PROC).
      if (matched_) {
        const StatusRecord message{0, matched_->source, matched_->tag, 0, 0};
        receive(e, call, r, sizes, static_cast<std::uint64_t>(matched_->comm), &message);
      }
    } else if (base == "MPI_Imrecv") {
      if (matched_ && !cancelled(e))
        irecv_comm[event_key(e)] = static_cast<std::uint64_t>(matched_->comm);
    } else if (e.info().category == Category::completion && !irecv_comm.empty()) {
      for_each_completed(e, [&](const RequestRef& ref, const StatusRecord* s) {
        if (ref.null) return;
        const auto it = irecv_comm.find(request_key(ref));
        if (it == irecv_comm.end()) return;
        if (!was_cancelled(s)) receive(e, call, r, sizes, it->second, s);
        irecv_comm.erase(it);
      });
    }
  }

  OutputFile out_;
  std::set<std::string>& notes_;
  std::uint64_t records_ = 0;
  std::map<std::tuple<char, std::int64_t, std::int64_t, std::int64_t, std::uint64_t>, std::uint64_t>
      channels_;
  CancelledRequests cancelled_;  // the current rank's
  MatchedMessages messages_;
  std::optional<MatchedMessage> matched_;  // what the current call received, if an Mrecv
};

}  // namespace

ExportStats export_chrome(const std::filesystem::path& trace, const std::filesystem::path& out,
                          const ExportOptions& options) {
  const TraceInput input = open_trace_input(trace);
  if (out.has_parent_path()) make_output_dir(out.parent_path());
  ExportStats stats;
  std::set<std::string> notes;
  std::uint64_t total = 0;
  for (const auto& r : input.manifest.ranks) total += r.events;
  Progress progress(options.progress, "chrome", total);
  ChromeWriter writer(out, notes);
  for (const RankInfo& held : input.manifest.ranks) writer.rank(input, held.rank, progress, stats);
  writer.finish(stats);
  progress.finish();
  stats.files.push_back(out);
  stats.notes.assign(notes.begin(), notes.end());
  return stats;
}

}  // namespace encore::exporter
