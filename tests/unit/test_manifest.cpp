#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "temp_dir_test.hpp"
#include <gtest/gtest.h>

#include "encore/error.hpp"
#include "encore/json_file.hpp"
#include "encore/manifest.hpp"
#include "encore/trace_dir.hpp"

namespace encore {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class ManifestTest : public TempDirTest {
 protected:
  // Message of the Error that loading `doc` throws, or "" if it loads.
  std::string load_error(const json& doc) {
    const fs::path p = dir_ / "manifest.json";
    std::ofstream(p) << doc.dump();
    try {
      load_manifest(p);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  }
};

Manifest sample() {
  Manifest m;
  m.kind = TraceKind::capture;
  m.tool_version = "0.1.0";
  m.nprocs = 2;
  m.command = {"./halo2d", "--size", "64"};
  m.start_time_unix_ns = 1700000000123456789;
  m.start_time_iso = "2023-11-14T22:13:20.123456789Z";
  m.mpi_library_version = "MPICH Version: 4.0";
  m.function_table = {"9f86d081884c7d65", {"MPI_Init", "MPI_Send", "MPI_Recv"}};
  m.options = {{"payload", true}, {"zstd_level", 3}};
  m.papi = {{"PAPI_TOT_INS"}, false, "perf_event_paranoid is 3", "Intel Xeon", 2400.5};
  m.clock = {"clock_gettime(CLOCK_MONOTONIC)", 1.0, "CLOCK_MONOTONIC as asked"};
  for (std::uint32_t r = 0; r < 2; ++r) {
    RankInfo info;
    info.rank = r;
    info.host = "node" + std::to_string(r);
    info.pid = 1000 + r;
    info.byte_order = r == 0 ? ByteOrder::little : ByteOrder::big;
    info.sizes = {4, 8, 8, 8, 8, 8};
    info.clock_offset_ns = r == 0 ? 0 : -1234;
    info.status = RankStatus::complete;
    info.events = 100 + r;
    info.payload_bytes = 1ull << 40;
    m.ranks.push_back(info);
  }
  return m;
}

TEST_F(ManifestTest, RoundTrip) {
  const fs::path p = dir_ / "manifest.json";
  Manifest m = sample();
  m.kind = TraceKind::replay;
  m.replay_of = ReplayOf{"/traces/run1", 1};
  save_manifest(m, p);
  const Manifest back = load_manifest(p);
  EXPECT_EQ(back.format_version.major, kFormatMajor);
  EXPECT_EQ(back.kind, TraceKind::replay);
  EXPECT_EQ(back.command, m.command);
  EXPECT_EQ(back.start_time_unix_ns, m.start_time_unix_ns);
  EXPECT_EQ(back.function_table.functions, m.function_table.functions);
  EXPECT_EQ(back.function_table.hash, m.function_table.hash);
  EXPECT_EQ(back.options, m.options);
  EXPECT_EQ(back.papi.reason, m.papi.reason);
  EXPECT_EQ(back.papi.cpu_mhz, 2400.5);
  EXPECT_EQ(back.clock.source, m.clock.source);
  EXPECT_EQ(back.clock.why, m.clock.why);
  ASSERT_EQ(back.ranks.size(), 2u);
  EXPECT_EQ(back.ranks[1].byte_order, ByteOrder::big);
  EXPECT_EQ(back.ranks[1].clock_offset_ns, -1234);
  EXPECT_EQ(back.ranks[1].payload_bytes, 1ull << 40);
  EXPECT_EQ(back.ranks[1].sizes.int_size, 4u);
  ASSERT_TRUE(back.replay_of);
  EXPECT_EQ(back.replay_of->rank, 1u);
  // No temporary file left behind.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1);
}

TEST_F(ManifestTest, UnknownKeysSurviveLoadAndSave) {
  json doc = manifest_to_json(sample());
  doc["future_top"] = {{"x", 1}};
  doc["papi"]["future_papi"] = "kept";
  doc["ranks"][1]["future_rank"] = 42;
  const fs::path p = dir_ / "manifest.json";
  std::ofstream(p) << doc.dump();
  Manifest m = load_manifest(p);
  m.ranks[1].status = RankStatus::aborted;
  save_manifest(m, p);
  json saved;
  std::ifstream(p) >> saved;
  EXPECT_EQ(saved["future_top"]["x"], 1);
  EXPECT_EQ(saved["papi"]["future_papi"], "kept");
  EXPECT_EQ(saved["ranks"][1]["future_rank"], 42);
  EXPECT_EQ(saved["ranks"][1]["status"], "aborted");
}

TEST_F(ManifestTest, NprocsMismatch) {
  json doc = manifest_to_json(sample());
  doc["nprocs"] = 3;
  EXPECT_EQ(load_error(doc),
            (dir_ / "manifest.json").string() + ": nprocs: is 3 but \"ranks\" has 2 entries");
}

TEST_F(ManifestTest, MissingKeyNamed) {
  json doc = manifest_to_json(sample());
  doc["ranks"][1].erase("pid");
  EXPECT_EQ(load_error(doc), (dir_ / "manifest.json").string() + ": missing key \"ranks[1].pid\"");
  doc = manifest_to_json(sample());
  doc.erase("clock");
  EXPECT_NE(load_error(doc).find("missing key \"clock\""), std::string::npos);
}

TEST_F(ManifestTest, WrongTypesAndValuesNamed) {
  json doc = manifest_to_json(sample());
  doc["ranks"][0]["byte_order"] = "middle";
  EXPECT_NE(load_error(doc).find("ranks[0].byte_order: expected \"little\" or \"big\""),
            std::string::npos);
  doc = manifest_to_json(sample());
  doc["nprocs"] = "2";
  EXPECT_NE(load_error(doc).find("nprocs: expected an integer"), std::string::npos);
  // A replay profile may list fewer ranks than nprocs, but not name billions: readers size
  // per-rank tables by it.
  doc = manifest_to_json(sample());
  doc["nprocs"] = 2147483647;
  EXPECT_NE(load_error(doc).find("nprocs: expected an integer from 0 to 16777216"),
            std::string::npos);
  doc = manifest_to_json(sample());
  doc["ranks"][1]["events"] = -5;
  EXPECT_NE(load_error(doc).find("ranks[1].events"), std::string::npos);
  doc = manifest_to_json(sample());
  doc["kind"] = "dream";
  EXPECT_NE(load_error(doc).find("kind: expected one of \"capture\", \"replay\", \"predicted\""),
            std::string::npos);
  doc = manifest_to_json(sample());
  doc["command"][1] = 7;
  EXPECT_NE(load_error(doc).find("command[1]: expected a string"), std::string::npos);
  doc = manifest_to_json(sample());
  doc["options"] = json::array();
  EXPECT_NE(load_error(doc).find("options: expected an object"), std::string::npos);
}

TEST_F(ManifestTest, RanksMustBeInOrder) {
  json doc = manifest_to_json(sample());
  std::swap(doc["ranks"][0], doc["ranks"][1]);
  EXPECT_NE(load_error(doc).find("ranks[0].rank: is 1, expected 0"), std::string::npos);
}

TEST_F(ManifestTest, UnknownMajorVersionRejected) {
  json doc = manifest_to_json(sample());
  doc["format_version"] = {{"major", 2}, {"minor", 1}};
  doc.erase("ranks");  // a newer major may look different: the version is checked first
  EXPECT_EQ(load_error(doc), (dir_ / "manifest.json").string() +
                                 ": format version 2.1 is newer than this reader (1.x)");
}

TEST_F(ManifestTest, InvalidJsonAndMissingFile) {
  const fs::path p = dir_ / "manifest.json";
  std::ofstream(p) << "{\"nprocs\": 2,,}";
  try {
    load_manifest(p);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("invalid JSON at offset"), std::string::npos) << e.what();
  }
  EXPECT_THROW(load_manifest(dir_ / "nope.json"), Error);
}

// An unknown key may hold anything, but not a million nested arrays: nlohmann copies
// recursively, so every tool overflowed its stack on the manifest.
TEST_F(ManifestTest, DeepNestingIsRefusedWithItsOffset) {
  std::string text = manifest_to_json(sample()).dump();
  text.pop_back();  // the closing brace
  text += ",\"extra\":";
  const std::size_t first = text.size();
  text += std::string(1'000'000, '[') + std::string(1'000'000, ']') + "}";
  const fs::path p = dir_ / "manifest.json";
  std::ofstream(p) << text;
  try {
    load_manifest(p);
    FAIL() << "loaded";
  } catch (const Error& e) {
    // Offset of the bracket opening level 65 (the top object is level 1).
    EXPECT_EQ(std::string(e.what()),
              p.string() + ": nesting deeper than 64 at offset " + std::to_string(first + 63));
  }
}

TEST(ParseJson, DepthLimitCountsBracketsOutsideStringsOnly) {
  const auto nested = [](std::size_t depth) {
    return std::string(depth, '[') + std::string(depth, ']');
  };
  EXPECT_EQ(parse_json(nested(kMaxJsonDepth), "f.json").size(), 1u);
  try {
    parse_json(nested(kMaxJsonDepth + 1), "f.json");
    FAIL() << "parsed";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "f.json: nesting deeper than 64 at offset 64");
  }
  // Brackets inside a string, after an escaped quote, are text.
  const json doc = parse_json(R"({"a": "\"\\" , "b": ")" + std::string(100, '[') + R"("})", "f");
  EXPECT_EQ(doc["b"].get<std::string>(), std::string(100, '['));
  try {
    parse_json("{\"a\": 1,,}", "f.json");
    FAIL() << "parsed";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "f.json: invalid JSON at offset 8");
  }
}

// A manifest that is a FIFO blocked every tool in open(). Should the fix regress, the writer
// opened after a few seconds releases the reader, and the test fails instead of hanging.
TEST_F(ManifestTest, FifoIsNotRead) {
  const fs::path p = dir_ / "manifest.json";
  ASSERT_EQ(::mkfifo(p.c_str(), 0600), 0);
  std::atomic<bool> done{false};
  std::thread rescue([&] {
    for (int i = 0; i < 50 && !done; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    // Non-blocking: succeeds only while a reader waits in open(), and wakes it.
    if (const int fd = done ? -1 : ::open(p.c_str(), O_WRONLY | O_NONBLOCK); fd >= 0) ::close(fd);
  });
  std::string message;
  try {
    load_manifest(p);
  } catch (const Error& e) {
    message = e.what();
  }
  done = true;
  rescue.join();
  EXPECT_EQ(message, p.string() + ": not a regular file");
}

// Refused before reading: a sparse file costs no disk.
TEST_F(ManifestTest, OversizedFileIsRefusedUnread) {
  const fs::path p = dir_ / "manifest.json";
  std::ofstream(p) << "{}";
  fs::resize_file(p, kMaxJsonFileBytes + 1);
  try {
    load_manifest(p);
    FAIL() << "loaded";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), p.string() + ": larger than 64 MiB (" +
                                         std::to_string(kMaxJsonFileBytes + 1) + " bytes)");
  }
}

TEST_F(ManifestTest, SaveRefusesInvalidManifest) {
  Manifest m = sample();
  m.nprocs = 5;
  EXPECT_THROW(save_manifest(m, dir_ / "manifest.json"), Error);
  EXPECT_FALSE(fs::exists(dir_ / "manifest.json"));
}

TEST(TraceDirNames, RankFileNames) {
  EXPECT_EQ(rank_file_name(0, StreamKind::events), "rank-00000.events");
  EXPECT_EQ(rank_file_name(3, StreamKind::payload), "rank-00003.payload");
  EXPECT_EQ(rank_file_name(123456, StreamKind::events), "rank-123456.events");
  const auto parsed = parse_rank_file_name("rank-00042.payload");
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->rank, 42u);
  EXPECT_EQ(parsed->kind, StreamKind::payload);
  EXPECT_EQ(parse_rank_file_name("rank-123456.events")->rank, 123456u);
  for (const char* bad :
       {"rank-42.events", "rank-000042.events", "rank-00042.evts", "rank-0004x.events",
        "manifest.json", "rank-00042", "rank-99999999999.events"})
    EXPECT_FALSE(parse_rank_file_name(bad)) << bad;
}

TEST_F(ManifestTest, TraceDirListsAndRequiresFiles) {
  const TraceDir t(dir_);
  EXPECT_EQ(t.events_path(7), dir_ / "rank-00007.events");
  std::ofstream(t.manifest_path()) << "{}";
  for (std::uint32_t r = 0; r < 2; ++r) {
    std::ofstream(t.events_path(r)) << "";
    std::ofstream(t.payload_path(r)) << "";
  }
  std::ofstream(dir_ / "notes.txt") << "";
  const auto files = t.list_rank_files();
  ASSERT_EQ(files.size(), 4u);
  EXPECT_EQ(files[3].rank, 1u);
  EXPECT_EQ(files[3].kind, StreamKind::payload);
  EXPECT_NO_THROW(t.require_files(2));
  try {
    t.require_files(3);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              t.events_path(2).string() + ": missing events stream of rank 2");
  }
}

}  // namespace
}  // namespace encore
