// Writes hand-made Encore traces with RankTraceWriter, for tests whose expected results are
// known analytically and for the export benchmark's large synthetic trace.
//   test_make_trace OUT pingpong BYTES COMPUTE_NS   rank 0 computes, then sends BYTES to rank 1
//   test_make_trace OUT nonblocking BYTES           isend/irecv (one wildcard) + waitall, both ways
//   test_make_trace OUT mismatch BYTES              rank 1 waits for a tag rank 0 never sends
//   test_make_trace OUT persistent BYTES            Send_init/Recv_init, started and waited twice
//   test_make_trace OUT synthetic ITERATIONS        halo-like loop: irecv, isend, waitall,
//                                                   compute, allreduce every 16 iterations
// Every call lasts 1 us; the times between calls are the compute segments.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "encore/error.hpp"
#include "encore/manifest.hpp"
#include "encore/mpi_table.hpp"
#include "encore/rank_trace_writer.hpp"
#include "encore/trace_dir.hpp"

namespace {

using namespace encore;

std::uint64_t handle_id(HandleKind kind, const char* name) {
  const auto handles = predefined_handles(kind);
  for (std::size_t i = 0; i < handles.size(); ++i)
    if (std::strcmp(handles[i].name, name) == 0) return 2 + i;
  std::fprintf(stderr, "no predefined %s\n", name);
  std::exit(2);
}

const std::uint64_t kWorld = handle_id(HandleKind::comm, "MPI_COMM_WORLD");
const std::uint64_t kByte = handle_id(HandleKind::datatype, "MPI_BYTE");
const std::uint64_t kDouble = handle_id(HandleKind::datatype, "MPI_DOUBLE");
const std::uint64_t kSum = handle_id(HandleKind::op, "MPI_SUM");
constexpr std::uint64_t kCallNs = 1000;

// One rank's calls, written in order with their times and indices.
class Rank {
 public:
  Rank(const std::filesystem::path& dir, std::uint32_t rank)
      : writer_(TraceDir(dir).events_path(rank), TraceDir(dir).payload_path(rank), rank) {}

  // Starts building a call to `f` after `compute_ns` of computation.
  Event& call(fn::Id f, std::uint64_t compute_ns = 0) {
    e_ = Event{};
    e_.function = f;
    e_.args.resize(e_.info().params.size());
    e_.start_ns = now_ + compute_ns;
    e_.end_ns = e_.start_ns + kCallNs;
    return e_;
  }
  void set(std::string_view name, std::int64_t v) { arg(name).scalar = v; }
  ArgValue& arg(std::string_view name) {
    const auto params = e_.info().params;
    for (std::size_t i = 0; i < params.size(); ++i)
      if (name == params[i].name) {
        e_.args[i].present = true;
        return e_.args[i];
      }
    std::fprintf(stderr, "%s has no parameter %.*s\n", e_.info().name,
                 static_cast<int>(name.size()), name.data());
    std::exit(2);
  }
  // Writes the call built since call(); returns its index (its requests' reference).
  std::uint64_t write() {
    for (std::size_t i = 0; i < e_.args.size(); ++i) e_.args[i].present = true;
    writer_.write(e_);
    now_ = e_.end_ns;
    return index_++;
  }
  void close() { writer_.close(); }
  std::uint64_t events() const { return writer_.events(); }

 private:
  RankTraceWriter writer_;
  Event e_;
  std::uint64_t now_ = 1000000;  // 1 ms after the clock's zero
  std::uint64_t index_ = 0;
};

void send(Rank& r, fn::Id f, std::int64_t dest, std::int64_t tag, std::int64_t bytes,
          std::uint64_t compute_ns = 0) {
  auto& e = r.call(f, compute_ns);
  r.set("count", bytes);
  r.set("datatype", static_cast<std::int64_t>(kByte));
  r.set("dest", dest);
  r.set("tag", tag);
  r.set("comm", static_cast<std::int64_t>(kWorld));
  e.send_hashes.push_back({0x1234, static_cast<std::uint64_t>(bytes)});
}

void recv(Rank& r, fn::Id f, std::int64_t source, std::int64_t tag, std::int64_t bytes) {
  r.call(f);
  r.set("count", bytes);
  r.set("datatype", static_cast<std::int64_t>(kByte));
  r.set("source", source);
  r.set("tag", tag);
  r.set("comm", static_cast<std::int64_t>(kWorld));
}

void init(Rank& r) {
  r.call(fn::Init);
  r.write();
}

void finalize(Rank& r) {
  r.call(fn::Finalize);
  r.write();
  r.close();
}

void status(Rank& r, std::string_view name, std::vector<StatusRecord> s) {
  r.arg(name).statuses = std::move(s);
}

void waitall(Rank& r, const std::vector<std::uint64_t>& reqs, std::vector<StatusRecord> statuses,
             std::uint64_t compute_ns = 0) {
  r.call(fn::Waitall, compute_ns);
  r.set("count", static_cast<std::int64_t>(reqs.size()));
  for (const auto i : reqs) r.arg("array_of_requests").requests.push_back({false, 0, i});
  status(r, "array_of_statuses", std::move(statuses));
  r.write();
}

void allreduce(Rank& r, std::int64_t count, std::uint64_t compute_ns) {
  r.call(fn::Allreduce, compute_ns);
  r.set("sendbuf", 0);
  r.set("recvbuf", 0);
  r.set("count", count);
  r.set("datatype", static_cast<std::int64_t>(kDouble));
  r.set("op", static_cast<std::int64_t>(kSum));
  r.set("comm", static_cast<std::int64_t>(kWorld));
  r.write();
}

void manifest(const std::filesystem::path& dir, const std::vector<std::uint64_t>& events) {
  Manifest m;
  m.kind = TraceKind::capture;
  m.tool_version = "test_make_trace";
  m.nprocs = static_cast<std::uint32_t>(events.size());
  m.command = {"test_make_trace"};
  m.start_time_iso = "1970-01-01T00:00:00Z";
  m.mpi_library_version = "hand-made";
  m.function_table.hash = std::string(kFunctionTableHash);
  for (const auto& f : function_table()) m.function_table.functions.emplace_back(f.name);
  m.clock = {"hand-made", 1.0, "written by make_trace"};
  for (std::uint32_t r = 0; r < m.nprocs; ++r) {
    RankInfo info;
    info.rank = r;
    info.host = "node" + std::to_string(r);
    info.pid = 1000 + r;
    info.sizes = {4, 8, 8, 8, 8, 8};
    info.status = RankStatus::complete;
    info.events = events[r];
    m.ranks.push_back(info);
  }
  save_manifest(m, TraceDir(dir).manifest_path());
}

int run(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s OUT pingpong|nonblocking|synthetic ARGS...\n", argv[0]);
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  const std::string_view what = argv[2];
  const std::int64_t n = std::strtoll(argv[3], nullptr, 10);
  std::filesystem::create_directories(dir);
  Rank r0(dir, 0), r1(dir, 1);
  init(r0);
  init(r1);
  if (what == "pingpong" && argc == 5) {
    const auto compute = std::strtoull(argv[4], nullptr, 10);
    send(r0, fn::Send, 1, 7, n, compute);
    r0.write();
    recv(r1, fn::Recv, 0, 7, n);
    status(r1, "status", {{0, 0, 7, static_cast<std::uint64_t>(n), 0}});
    r1.write();
  } else if (what == "mismatch") {
    send(r0, fn::Send, 1, 7, n);
    r0.write();
    recv(r1, fn::Recv, 0, 8, n);
    status(r1, "status", {{0, 0, 8, static_cast<std::uint64_t>(n), 0}});
    r1.write();
  } else if (what == "persistent") {
    send(r0, fn::Send_init, 1, 5, n);
    const auto sreq = r0.write();
    recv(r1, fn::Recv_init, 0, 5, n);
    const auto rreq = r1.write();
    for (int i = 0; i < 2; ++i) {
      for (auto [r, req] : {std::pair{&r0, sreq}, std::pair{&r1, rreq}}) {
        r->call(fn::Start);
        r->arg("request").requests.push_back({false, 0, req});
        r->write();
        r->call(fn::Wait);
        r->arg("request").requests.push_back({false, 0, req});
        const bool receiver = r == &r1;
        status(*r, "status",
               {{0, 0, receiver ? 5 : 0, receiver ? static_cast<std::uint64_t>(n) : 0, 0}});
        r->write();
      }
    }
  } else if (what == "nonblocking") {
    // Each rank posts a receive (rank 1's with MPI_ANY_SOURCE/MPI_ANY_TAG), sends, waits for
    // both: two messages of n bytes cross, each tagged with its sender's rank + 3.
    Rank* ranks[2] = {&r0, &r1};
    for (std::int64_t me = 0; me < 2; ++me) {
      Rank& r = *ranks[me];
      recv(r, fn::Irecv, me == 1 ? -2 : 1, me == 1 ? -1 : 4, n);
      const auto rq = r.write();
      send(r, fn::Isend, 1 - me, me + 3, n);
      const auto sq = r.write();
      waitall(r, {rq, sq},
              {{0, 1 - me, 1 - me + 3, static_cast<std::uint64_t>(n), 0}, {0, 0, 0, 0, 0}});
    }
  } else if (what == "synthetic") {
    Rank* ranks[2] = {&r0, &r1};
    for (std::int64_t i = 0; i < n; ++i) {
      for (std::int64_t me = 0; me < 2; ++me) {
        Rank& r = *ranks[me];
        recv(r, fn::Irecv, 1 - me, 0, 8192);
        const auto rq = r.write();
        send(r, fn::Isend, 1 - me, 0, 8192);
        const auto sq = r.write();
        waitall(r, {rq, sq}, {{0, 1 - me, 0, 8192, 0}, {0, 0, 0, 0, 0}}, 20000);
        if (i % 16 == 15) allreduce(r, 4, 5000);
      }
    }
  } else {
    std::fprintf(stderr, "unknown scenario %s\n", argv[2]);
    return 2;
  }
  finalize(r0);
  finalize(r1);
  manifest(dir, {r0.events(), r1.events()});
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const encore::Error& e) {
    std::fprintf(stderr, "test_make_trace: %s\n", e.what());
    return 1;
  }
}
