// Copies a recorded trace through libtime's reader and RankTraceWriter, changing one thing, so
// the tests can prove the replay takes a value from the trace and not from MPI:
//   test_rewrite_trace IN OUT attribute KEY VALUE [KEY VALUE...]
//       the recorded value of predefined attribute KEY (tag_ub, universe_size, ...) becomes VALUE;
//       a key the recorded run found unset gets it too (its flag becomes 1)
//   test_rewrite_trace IN OUT format-1.0
//       drops what format 1.1 added (attribute values, dist-graph neighbours): an older trace
//   test_rewrite_trace IN OUT wrong-send-hashes
//       every recorded send hash becomes one no data has, and a send to MPI_PROC_NULL that has
//       none gets one: a replay that checked them would report each
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <mpi.h>

#include "encore/error.hpp"
#include "encore/event_reader.hpp"
#include "encore/manifest.hpp"
#include "encore/payload_reader.hpp"
#include "encore/rank_trace_writer.hpp"
#include "encore/trace_dir.hpp"

namespace {

using namespace encore;
namespace fs = std::filesystem;

int key_of(const std::string& name) {
  static const std::map<std::string, int> keys = {{"tag_ub", MPI_TAG_UB},
                                                  {"host", MPI_HOST},
                                                  {"io", MPI_IO},
                                                  {"wtime_is_global", MPI_WTIME_IS_GLOBAL},
                                                  {"universe_size", MPI_UNIVERSE_SIZE},
                                                  {"lastusedcode", MPI_LASTUSEDCODE},
                                                  {"appnum", MPI_APPNUM}};
  const auto it = keys.find(name);
  if (it == keys.end()) throw Error("unknown attribute key " + name);
  return it->second;
}

// Parameter `name` of the event's function, or null.
ArgValue* param(Event& e, std::string_view name) {
  const auto& params = function_table()[e.function].params;
  for (std::size_t i = 0; i < params.size() && i < e.args.size(); ++i)
    if (name == params[i].name) return e.args[i].present ? &e.args[i] : nullptr;
  return nullptr;
}

bool sends_to_a_peer(std::uint16_t f) {
  return f == fn::Send || f == fn::Bsend || f == fn::Ssend || f == fn::Rsend || f == fn::Isend ||
         f == fn::Ibsend || f == fn::Issend || f == fn::Irsend || f == fn::Sendrecv;
}

void wrong_send_hashes(Event& e) {
  for (SendHash& h : e.send_hashes) h.hash = ~h.hash;
  if (!sends_to_a_peer(e.function)) return;
  const ArgValue* dest = param(e, "dest");
  const ArgValue* count = param(e, "count") ? param(e, "count") : param(e, "sendcount");
  if (e.send_hashes.empty() && dest && count && dest->scalar == MPI_PROC_NULL && count->scalar > 0)
    e.send_hashes.push_back({0x5eed5eed5eed5eedull, static_cast<std::uint64_t>(count->scalar)});
}

struct Change {
  bool to_1_0 = false;
  bool wrong_hashes = false;
  std::map<int, std::int64_t> values;  // C keyval -> new value

  void apply(Event& e) const {
    if (wrong_hashes) {
      wrong_send_hashes(e);
      return;
    }
    if (to_1_0) {
      e.attribute.reset();
      e.neighbours.reset();
      return;
    }
    const bool get = e.function == fn::Comm_get_attr || e.function == fn::Attr_get;
    if (!get || e.rc != 0) return;
    const auto key = static_cast<int>(e.args[1].scalar);
    // The Fortran form of a predefined key is the C one plus 1.
    for (const int k : {key, key - 1}) {
      const auto it = values.find(k);
      if (it == values.end()) continue;
      e.args[3].scalar = 1;  // flag
      e.attribute = it->second;
    }
  }
};

void copy_rank(const TraceDir& in, const TraceDir& out, std::uint32_t rank, const Change& change) {
  RankEventReader events(in.events_path(rank));
  RankPayloadReader payload(in.payload_path(rank));
  RankWriterOptions options;
  options.payload_order = payload.byte_order();
  RankTraceWriter writer(out.events_path(rank), out.payload_path(rank), rank, options);
  Event e;
  std::vector<std::byte> bytes;
  while (events.next(e)) {
    bytes.clear();
    for (const PayloadRef& p : e.payloads) {
      const auto part = payload.read(e.thread, p.offset, p.bytes);
      bytes.insert(bytes.end(), part.begin(), part.end());
    }
    Event copy = e;  // changed apart: the reader reuses `e`, clearing only what it filled
    change.apply(copy);
    writer.write(copy, bytes);
  }
  if (!events.problem().empty()) throw Error(events.problem());
  writer.close();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr,
                 "usage: %s IN OUT attribute KEY VALUE... | format-1.0 | wrong-send-hashes\n",
                 argv[0]);
    return 2;
  }
  try {
    const TraceDir in(argv[1]), out(argv[2]);
    Change change;
    const std::string mode = argv[3];
    if (mode == "format-1.0") {
      change.to_1_0 = true;
    } else if (mode == "wrong-send-hashes") {
      change.wrong_hashes = true;
    } else if (mode == "attribute" && argc % 2 == 0) {
      for (int i = 4; i + 1 < argc; i += 2)
        change.values[key_of(argv[i])] = std::atoll(argv[i + 1]);
    } else {
      throw Error("unknown change " + mode);
    }
    fs::create_directories(out.root());
    Manifest m = load_manifest(in.manifest_path());
    for (const RankInfo& r : m.ranks) copy_rank(in, out, r.rank, change);
    if (change.to_1_0) m.format_version.minor = 0;
    save_manifest(m, out.manifest_path());
    for (const auto& f : fs::directory_iterator(in.root()))
      if (f.path().string().ends_with(".callsites.json"))
        fs::copy_file(f.path(), out.root() / f.path().filename());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "test_rewrite_trace: %s\n", e.what());
    return 1;
  }
  return 0;
}
