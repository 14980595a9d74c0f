// SimGrid SMPI time-independent traces (the action vocabulary of SimGrid 3.32's
// smpi_replay.cpp): one action file per rank plus the index `smpirun -replay` takes.
// `init` has no argument, so every count is in bytes (MPI_BYTE).
#include <cstdio>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "call_args.hpp"
#include "cancelled_requests.hpp"
#include "exporters.hpp"
#include "matched_messages.hpp"
#include "message_sizes.hpp"
#include "output_file.hpp"
#include "progress.hpp"
#include "rank_walk.hpp"
#include "timeline.hpp"
#include <fmt/format.h>

#include "encore/error.hpp"

namespace encore::exporter {
namespace {

// The source and tag a wildcard nonblocking receive actually matched, found at its
// completion. SimGrid's irecv needs them up front, so a first pass over the rank collects
// them (only for wildcard receives: 16 bytes each).
using Resolved = std::unordered_map<std::uint64_t, std::pair<std::int64_t, std::int64_t>>;

// What the first pass learns from completions: wildcard receives' matches, and the sends
// and receives that were cancelled (an isend or irecv is written where it is posted).
struct FirstPass {
  Resolved resolved;
  CancelledRequests cancelled;
};

bool is_wildcard_irecv(const Event& e) {
  return (e.function == fn::Irecv || e.function == fn::Irecv_c) &&
         (scalar_arg(e, "source", 0) == kAnySource || scalar_arg(e, "tag", 0) == kAnyTag);
}

FirstPass first_pass(const TraceInput& trace, std::uint32_t rank) {
  FirstPass out;
  std::set<std::uint64_t> pending;
  RankTimeline timeline(trace, rank);
  TimelineCall call;
  while (timeline.next(call)) {
    const Event& e = *call.event;
    out.cancelled.observe(e);
    if (is_wildcard_irecv(e)) {
      pending.insert(event_key(e));
    } else if (!pending.empty() && e.info().category == Category::completion) {
      for_each_completed(e, [&](const RequestRef& r, const StatusRecord* st) {
        if (r.null || !st) return;
        // A cancelled receive matched nothing: its status's source and tag mean nothing.
        if (pending.erase(request_key(r)) && !was_cancelled(st))
          out.resolved[request_key(r)] = {st->source, st->tag};
      });
    }
  }
  return out;
}

// Writes one rank's action file.
class ActionWriter {
 public:
  ActionWriter(const std::filesystem::path& path, std::uint32_t rank, std::uint32_t nprocs,
               const ExportOptions& options, std::set<std::string>& notes)
      : out_(path),
        rank_(rank),
        nprocs_(nprocs),
        options_(options),
        notes_(notes),
        sizes_(rank, nprocs) {}

  void run(const TraceInput& trace, Progress& progress, ExportStats& stats) {
    const FirstPass first = first_pass(trace, rank_);
    RankTimeline timeline(trace, rank_);
    line("init");
    TimelineCall call;
    bool other_threads = false;
    while (timeline.next(call)) {
      progress.advance();
      ++stats.events;
      const Event& e = *call.event;
      sizes_.observe(e);
      matched_ = messages_.observe(e);  // every thread's probes
      if (e.thread != 0) {
        other_threads = true;
        continue;
      }
      compute_ns_ += call.compute_ns;
      if (!translate(e, first)) {
        // Calls with no action (local calls, probes, unsupported ones) keep their time.
        if (e.function != fn::Init && e.function != fn::Init_thread && e.function != fn::Finalize)
          compute_ns_ += e.end_ns - e.start_ns;
      }
    }
    line("finalize");
    if (other_threads)
      notes_.insert(
          "calls of threads other than the main one are left out (a SimGrid actor is one "
          "thread)");
    if (auto note = timeline.end_note(); !note.empty())
      stats.problems.push_back(note + "; exported up to there (the replay may not end cleanly)");
    stats.records += records_;
    out_.close();
  }

 private:
  // The rank in MPI_COMM_WORLD of `rank` in communicator `comm`, or -1 if unknown.
  std::int64_t world_rank(std::uint64_t comm, std::int64_t rank) {
    return sizes_.world_rank(comm, rank);
  }

  template <typename... T>
  void line(fmt::format_string<T...> action, T&&... args) {
    flush_compute();
    out_.print("{} ", rank_);
    out_.print(action, std::forward<T>(args)...);
    out_.write("\n");
    ++records_;
  }

  void flush_compute() {
    if (compute_ns_ == 0) return;
    // ns x speed first, then / 1e9: whole results stay whole (no 12389.000000000002).
    const double ns = static_cast<double>(compute_ns_);
    compute_ns_ = 0;
    if (options_.compute_as_sleep)
      out_.print("{} sleep {}\n", rank_, ns / 1e9);
    else
      out_.print("{} compute {}\n", rank_, ns * options_.host_flops / 1e9);
    ++records_;
  }

  std::uint64_t bytes(const Event& e, std::string_view count, std::string_view type) {
    const std::int64_t n = scalar_arg(e, count, 0);
    const ArgValue* t = recorded_arg(e, type);
    if (n <= 0 || !t) return 0;
    return static_cast<std::uint64_t>(n) * type_size(static_cast<std::uint64_t>(t->scalar));
  }

  std::uint64_t type_size(std::uint64_t datatype) {
    const std::uint64_t size = sizes_.type_size(datatype);
    if (size == 0)
      notes_.insert("messages of datatypes whose size is unknown are written with 0 bytes");
    return size;
  }

  // Per-peer byte counts of a v-collective (zeros where not significant).
  std::string counts(const Event& e, std::string_view name, std::string_view type) {
    const ArgValue* c = recorded_arg(e, name);
    const ArgValue* t = recorded_arg(e, type);
    const std::uint64_t size = t ? type_size(static_cast<std::uint64_t>(t->scalar)) : 0;
    std::string s;
    std::uint64_t total = 0;
    for (std::uint32_t i = 0; i < nprocs_; ++i) {
      const std::int64_t n = c && i < c->list.size() ? c->list[i] : 0;
      const std::uint64_t b = n > 0 ? static_cast<std::uint64_t>(n) * size : 0;
      total += b;
      s += fmt::format("{}{}", i ? " " : "", b);
    }
    last_total_ = total;
    return s;
  }

  struct Pending {
    std::int64_t src, dst, tag;
  };
  // A persistent request: what each MPI_Start of it sends or receives.
  struct Persistent {
    bool send;
    std::int64_t peer, tag;  // world rank; -1: left out (MPI_PROC_NULL, unknown, wildcard)
    std::uint64_t bytes;
  };

  void persistent_init(const Event& e, bool send, std::uint64_t comm) {
    const std::int64_t peer = scalar_arg(e, send ? "dest" : "source", kProcNull);
    const std::int64_t tag = scalar_arg(e, "tag", 0);
    std::int64_t w = peer == kProcNull ? -1 : world_rank(comm, peer);
    if (!send && (peer == kAnySource || tag == kAnyTag)) {
      notes_.insert("persistent receives with MPI_ANY_SOURCE or MPI_ANY_TAG are left out");
      w = -1;
    }
    persistent_[event_key(e)] = {send, w, tag, bytes(e, "count", "datatype")};
  }

  void start(const Event& e, const RequestRef& r, const CancelledRequests& cancelled) {
    if (r.null) return;
    const auto it = persistent_.find(request_key(r));
    if (it == persistent_.end() || it->second.peer < 0) return;
    if (cancelled.contains(e, r)) {
      note_cancelled();
      return;
    }
    const Persistent& p = it->second;
    line("{} {} {} {}", p.send ? "isend" : "irecv", p.peer, p.tag, p.bytes);
    const std::int64_t me = rank_;
    pending_[request_key(r)] = p.send ? Pending{me, p.peer, p.tag} : Pending{p.peer, me, p.tag};
  }

  void point_to_point(bool send, bool blocking, const Event& e, std::uint64_t comm,
                      std::int64_t peer, std::int64_t tag, std::uint64_t nbytes) {
    if (peer == kProcNull) return;
    const std::int64_t wpeer = world_rank(comm, peer);
    if (wpeer < 0 || tag < 0) {
      notes_.insert(
          "point-to-point calls whose peer or tag is unknown (intercommunicators of other "
          "jobs, unknown communicators) are left out");
      return;
    }
    line("{}{} {} {} {}", blocking ? "" : "i", send ? "send" : "recv", wpeer, tag, nbytes);
    if (!blocking) {
      const std::int64_t me = rank_;
      pending_[event_key(e)] = send ? Pending{me, wpeer, tag} : Pending{wpeer, me, tag};
    }
  }

  void note_cancelled() {
    notes_.insert(
        "cancelled sends and receives are left out (they moved no message; SimGrid has no "
        "cancel action)");
  }

  // Whether `e`, a nonblocking send or receive, was cancelled (then it is left out).
  bool cancelled(const Event& e, const FirstPass& first) {
    if (!first.cancelled.contains(e, RequestRef{false, e.thread, e.index})) return false;
    note_cancelled();
    return true;
  }

  void wait_for(const RequestRef& r) {
    if (r.null) return;
    const auto it = pending_.find(request_key(r));
    if (it == pending_.end()) return;  // a collective, a PROC_NULL peer, an unknown request
    line("wait {} {} {}", it->second.src, it->second.dst, it->second.tag);
    pending_.erase(it);
  }

  // Writes the actions of `e`; false if it has none (its time then counts as compute).
  bool translate(const Event& e, const FirstPass& first) {
    if (e.rc != 0) return false;
    const std::uint64_t comm = static_cast<std::uint64_t>(scalar_arg(e, "comm", 0));
    switch (e.function) {
      case fn::Send:
      case fn::Ssend:
      case fn::Rsend:
      case fn::Bsend:
      case fn::Isend:
      case fn::Issend:
      case fn::Irsend:
      case fn::Ibsend:
      case fn::Send_c:
      case fn::Ssend_c:
      case fn::Rsend_c:
      case fn::Bsend_c:
      case fn::Isend_c:
      case fn::Issend_c:
      case fn::Irsend_c:
      case fn::Ibsend_c: {
        const std::string_view n = e.info().name;
        const bool blocking = n[4] != 'I';
        if (!blocking && cancelled(e, first)) return false;
        point_to_point(true, blocking, e, comm, scalar_arg(e, "dest", kProcNull),
                       scalar_arg(e, "tag", 0), bytes(e, "count", "datatype"));
        return true;
      }
      case fn::Recv:
      case fn::Recv_c: {
        std::int64_t src = scalar_arg(e, "source", kProcNull);
        std::int64_t tag = scalar_arg(e, "tag", 0);
        if (const ArgValue* st = recorded_arg(e, "status"); st && !st->statuses.empty()) {
          if (src == kAnySource) src = st->statuses[0].source;
          if (tag == kAnyTag) tag = st->statuses[0].tag;
        }
        point_to_point(false, true, e, comm, src, tag, bytes(e, "count", "datatype"));
        return true;
      }
      case fn::Irecv:
      case fn::Irecv_c: {
        if (cancelled(e, first)) return false;
        std::int64_t src = scalar_arg(e, "source", kProcNull);
        std::int64_t tag = scalar_arg(e, "tag", 0);
        if (is_wildcard_irecv(e)) {
          const auto it = first.resolved.find(event_key(e));
          if (it == first.resolved.end()) {
            notes_.insert("wildcard receives never completed in the trace are left out");
            return true;
          }
          src = it->second.first;
          tag = it->second.second;
        }
        point_to_point(false, false, e, comm, src, tag, bytes(e, "count", "datatype"));
        return true;
      }
      case fn::Mrecv:
      case fn::Mrecv_c:
      case fn::Imrecv:
      case fn::Imrecv_c: {
        // A message matched by MPI_Mprobe/MPI_Improbe: a receive of its source and tag. None
        // for MPI_MESSAGE_NO_PROC (a probe of MPI_PROC_NULL).
        if (!matched_) return false;
        const bool blocking = e.function == fn::Mrecv || e.function == fn::Mrecv_c;
        if (!blocking && cancelled(e, first)) return false;
        point_to_point(false, blocking, e, static_cast<std::uint64_t>(matched_->comm),
                       matched_->source, matched_->tag, bytes(e, "count", "datatype"));
        return true;
      }
      case fn::Sendrecv:
      case fn::Sendrecv_replace:
      case fn::Sendrecv_c:
      case fn::Sendrecv_replace_c: {
        // isend + recv + wait keeps both tags (SimGrid's sendRecv action uses tag 0).
        const bool replace =
            e.function == fn::Sendrecv_replace || e.function == fn::Sendrecv_replace_c;
        const std::uint64_t sent =
            replace ? bytes(e, "count", "datatype") : bytes(e, "sendcount", "sendtype");
        const std::uint64_t received = replace ? sent : bytes(e, "recvcount", "recvtype");
        std::int64_t src = scalar_arg(e, "source", kProcNull);
        std::int64_t rtag = scalar_arg(e, "recvtag", 0);
        if (const ArgValue* st = recorded_arg(e, "status"); st && !st->statuses.empty()) {
          if (src == kAnySource) src = st->statuses[0].source;
          if (rtag == kAnyTag) rtag = st->statuses[0].tag;
        }
        point_to_point(true, false, e, comm, scalar_arg(e, "dest", kProcNull),
                       scalar_arg(e, "sendtag", 0), sent);
        point_to_point(false, true, e, comm, src, rtag, received);
        wait_for(RequestRef{false, e.thread, e.index});
        return true;
      }
      case fn::Wait:
      case fn::Waitall:
      case fn::Waitany:
      case fn::Waitsome:
      case fn::Test:
      case fn::Testall:
      case fn::Testany:
      case fn::Testsome: {
        const std::uint64_t before = records_;
        for_each_completed(e, [&](const RequestRef& r, const StatusRecord*) { wait_for(r); });
        return records_ != before;
      }
      case fn::Send_init:
      case fn::Ssend_init:
      case fn::Rsend_init:
      case fn::Bsend_init:
      case fn::Send_init_c:
      case fn::Ssend_init_c:
      case fn::Rsend_init_c:
      case fn::Bsend_init_c:
        persistent_init(e, true, comm);
        return false;
      case fn::Recv_init:
      case fn::Recv_init_c:
        persistent_init(e, false, comm);
        return false;
      case fn::Start:
      case fn::Startall: {
        const std::uint64_t before = records_;
        const ArgValue* reqs = recorded_arg(e, "array_of_requests");
        if (!reqs) reqs = recorded_arg(e, "request");
        if (reqs)
          for (const auto& r : reqs->requests) start(e, r, first.cancelled);
        return records_ != before;
      }
      case fn::Request_free: {
        const ArgValue* req = recorded_arg(e, "request");
        if (req && !req->requests.empty()) persistent_.erase(request_key(req->requests[0]));
        return false;
      }
      default:
        break;
    }
    if (std::string_view(e.info().name).ends_with("_init") &&
        e.info().category != Category::environment) {
      notes_.insert(
          "persistent collectives (MPI_*_init) are not implemented yet: their calls become "
          "compute time");
      return false;
    }
    if (e.info().category == Category::collective) return collective(e, comm);
    return false;
  }

  bool collective(const Event& e, std::uint64_t comm) {
    if (!sizes_.is_world(comm)) {
      notes_.insert(
          "collectives on communicators other than MPI_COMM_WORLD become compute time (their "
          "recorded duration): SimGrid's replay knows only the world");
      return false;
    }
    const std::int64_t root = scalar_arg(e, "root", 0);
    std::string name(e.info().name);
    name.erase(0, 4);  // "MPI_"
    if (name.ends_with("_c")) name.resize(name.size() - 2);
    if (name.starts_with("I")) {
      notes_.insert(
          "nonblocking collectives are written as blocking ones at their start (SimGrid has "
          "no nonblocking collective actions)");
      name.erase(0, 1);
      name[0] = static_cast<char>(name[0] - 'a' + 'A');  // MPI_Ibcast -> Bcast
    }
    std::string a;
    if (name == "Barrier") {
      a = "barrier";
    } else if (name == "Bcast") {
      a = fmt::format("bcast {} {}", bytes(e, "count", "datatype"), root);
    } else if (name == "Reduce") {
      a = fmt::format("reduce {} 0 {}", bytes(e, "count", "datatype"), root);
    } else if (name == "Allreduce") {
      a = fmt::format("allreduce {} 0", bytes(e, "count", "datatype"));
    } else if (name == "Scan" || name == "Exscan") {
      a = fmt::format("{} {} 0", name == "Exscan" ? "exscan" : "scan",
                      bytes(e, "count", "datatype"));
    } else if (name == "Alltoall") {
      a = fmt::format("alltoall {} {}", bytes(e, "sendcount", "sendtype"),
                      bytes(e, "recvcount", "recvtype"));
    } else if (name == "Alltoallv") {
      const std::string sc = counts(e, "sendcounts", "sendtype");
      const std::uint64_t st = last_total_;
      const std::string rc = counts(e, "recvcounts", "recvtype");
      a = fmt::format("alltoallv {} {} {} {}", st, sc, last_total_, rc);
    } else if (name == "Gather") {
      a = fmt::format("gather {} {} {}", bytes(e, "sendcount", "sendtype"),
                      bytes(e, "recvcount", "recvtype"), root);
    } else if (name == "Allgather") {
      a = fmt::format("allgather {} {}", bytes(e, "sendcount", "sendtype"),
                      bytes(e, "recvcount", "recvtype"));
    } else if (name == "Gatherv") {
      a = fmt::format("gatherv {} {} {}", bytes(e, "sendcount", "sendtype"),
                      counts(e, "recvcounts", "recvtype"), root);
    } else if (name == "Allgatherv") {
      a = fmt::format("allgatherv {} {}", bytes(e, "sendcount", "sendtype"),
                      counts(e, "recvcounts", "recvtype"));
    } else if (name == "Scatter") {
      a = fmt::format("scatter {} {} {}", bytes(e, "sendcount", "sendtype"),
                      bytes(e, "recvcount", "recvtype"), root);
    } else if (name == "Scatterv") {
      a = fmt::format("scatterv {} {} {}", counts(e, "sendcounts", "sendtype"),
                      bytes(e, "recvcount", "recvtype"), root);
    } else if (name == "Reduce_scatter") {
      a = fmt::format("reducescatter {} 0", counts(e, "recvcounts", "datatype"));
    } else if (name == "Reduce_scatter_block") {
      const std::uint64_t b = bytes(e, "recvcount", "datatype");
      std::string c;
      for (std::uint32_t i = 0; i < nprocs_; ++i) c += fmt::format("{}{}", i ? " " : "", b);
      a = fmt::format("reducescatter {} 0", c);
    } else {
      notes_.insert(
          fmt::format("{} has no SimGrid action: its time becomes compute", e.info().name));
      return false;
    }
    line("{}", a);
    return true;
  }

  OutputFile out_;
  std::uint32_t rank_;
  std::uint32_t nprocs_;
  const ExportOptions& options_;
  std::set<std::string>& notes_;
  MessageSizes sizes_;
  MatchedMessages messages_;
  std::optional<MatchedMessage> matched_;  // what the current call received, if an Mrecv
  std::uint64_t compute_ns_ = 0;
  std::uint64_t records_ = 0;
  std::uint64_t last_total_ = 0;
  std::unordered_map<std::uint64_t, Pending> pending_;
  std::unordered_map<std::uint64_t, Persistent> persistent_;
};

std::string action_file_name(std::uint32_t rank) { return fmt::format("rank-{:05}.txt", rank); }

}  // namespace

ExportStats export_simgrid(const std::filesystem::path& trace, const std::filesystem::path& out,
                           const ExportOptions& options) {
  if (!(options.host_flops > 0))
    throw Error(fmt::format("--host-speed must be positive (got {})", options.host_flops));
  const TraceInput input = open_trace_input(trace);
  prepare_output_dir(out);  // as the other formats: a new or empty directory
  ExportStats stats;
  std::set<std::string> notes;
  std::uint64_t total = 0;
  for (const auto& r : input.manifest.ranks) total += r.events;
  Progress progress(options.progress, "simgrid", total);
  const auto abs_out = std::filesystem::absolute(out);
  std::string index;
  if (input.manifest.ranks.size() < input.manifest.nprocs)
    notes.insert("the trace holds " + std::to_string(input.manifest.ranks.size()) + " of " +
                 std::to_string(input.manifest.nprocs) +
                 " ranks (a replay profile): only their action files are written; smpirun "
                 "-replay needs every rank's (export a predicted trace for a whole run)");
  for (const RankInfo& held : input.manifest.ranks) {
    const std::uint32_t rank = held.rank;
    const auto path = abs_out / action_file_name(rank);
    ActionWriter(path, rank, input.manifest.nprocs, options, notes).run(input, progress, stats);
    index += path.string() + "\n";
  }
  progress.finish();
  OutputFile idx(out / "index.txt");
  idx.write(index);
  idx.close();
  stats.files.push_back(out / "index.txt");
  stats.notes.assign(notes.begin(), notes.end());
  return stats;
}

}  // namespace encore::exporter
