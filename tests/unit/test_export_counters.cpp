// PAPI counters in exports: a one-rank trace written with RankTraceWriter, whose manifest says
// two counters were recorded, exported to OTF2 (metrics, read back with otf2-print) and to
// DUMPI (per-record counter values and the label record, read back byte by byte).
#include <cstdio>
#include <fstream>
#include <iterator>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "exporters.hpp"
#include "temp_dir_test.hpp"
#include <gtest/gtest.h>

#include "encore/manifest.hpp"
#include "encore/rank_trace_writer.hpp"
#include "encore/trace_dir.hpp"

namespace encore {
namespace {

class ExportCounters : public TempDirTest {
 protected:
  // MPI_Init, then n MPI_Barrier on MPI_COMM_WORLD, then MPI_Finalize; event i counted
  // (i, 10 i) over the compute segment before it.
  void write_trace(int n) {
    Manifest m;
    m.kind = TraceKind::capture;
    m.nprocs = 1;
    m.function_table.hash = std::string(kFunctionTableHash);
    for (const auto& f : function_table()) m.function_table.functions.emplace_back(f.name);
    m.papi.requested = {"PAPI_TOT_INS", "PAPI_TOT_CYC"};
    m.papi.available = true;
    RankInfo r;
    r.host = "node0";
    r.status = RankStatus::complete;
    const TraceDir dir(dir_ / "t");
    std::filesystem::create_directories(dir.root());
    RankTraceWriter w(dir.events_path(0), dir.payload_path(0), 0);
    std::uint64_t t = 1000;
    auto add = [&](std::uint16_t function, std::uint64_t i) {
      Event ev;
      ev.function = function;
      ev.start_ns = t;
      ev.end_ns = t + 100;
      t += 1000;
      for (const auto& p : ev.info().params) {
        ArgValue a;
        a.present = p.role == Role::comm;
        a.scalar = 2;  // MPI_COMM_WORLD
        ev.args.push_back(a);
      }
      ev.counters = {i, 10 * i};
      w.write(ev);
    };
    add(fn::Init, 0);
    for (int i = 1; i <= n; ++i) add(fn::Barrier, static_cast<std::uint64_t>(i));
    add(fn::Finalize, static_cast<std::uint64_t>(n) + 1);
    w.close();
    r.events = w.events();
    m.ranks.push_back(r);
    save_manifest(m, dir.manifest_path());
  }
};

std::string run(const std::string& command) {
  std::string out;
  FILE* p = popen(command.c_str(), "r");
  if (!p) return out;
  char buf[4096];
  while (std::size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  pclose(p);
  return out;
}

TEST_F(ExportCounters, Otf2MetricsAccumulateOverComputeSegments) {
  write_trace(3);
  const auto stats = exporter::export_otf2(dir_ / "t", dir_ / "o", {});
  EXPECT_EQ(stats.events, 5u);
  const std::string text = run("otf2-print -A " + (dir_ / "o" / "traces.otf2").string());
  EXPECT_EQ(text.find("INVALID"), std::string::npos);
  EXPECT_NE(text.find("METRIC_MEMBER"), std::string::npos) << text;
  EXPECT_NE(text.find("\"PAPI_TOT_CYC\""), std::string::npos);
  // Two metric events per compute segment (4 segments): the running sums before and after.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> values;
  const std::regex metric(R"(^METRIC .*\(.*UINT64; (\d+)\).*\(.*UINT64; (\d+)\))");
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (std::regex_search(line, m, metric))
      values.emplace_back(std::stoull(m[1].str()), std::stoull(m[2].str()));
  }
  const std::vector<std::pair<std::uint64_t, std::uint64_t>> expected = {
      {0, 0}, {1, 10}, {1, 10}, {3, 30}, {3, 30}, {6, 60}, {6, 60}, {10, 100}};
  EXPECT_EQ(values, expected) << text;
}

std::uint64_t be(const std::vector<unsigned char>& d, std::size_t at, int bytes) {
  std::uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v = (v << 8) | d.at(at + static_cast<std::size_t>(i));
  return v;
}

TEST_F(ExportCounters, DumpiRecordsCarryTheRunningCounts) {
  write_trace(2);
  exporter::export_dumpi(dir_ / "t", dir_ / "d", {});
  std::ifstream in(dir_ / "d" / "encore-0000.bin", std::ios::binary);
  const std::vector<unsigned char> d{std::istreambuf_iterator<char>(in), {}};
  ASSERT_GT(d.size(), 64u);
  // Records: label, mask, thread, 2 x (u16 s, u32 ns), u8 n, n x (u64 in, u64 out), fields.
  std::size_t at = 16;
  const std::vector<std::uint64_t> labels = {124, 52, 52, 125};  // Init, Barrier x2, Finalize
  std::uint64_t ins = 0;
  for (std::size_t k = 0; k < labels.size(); ++k) {
    EXPECT_EQ(be(d, at, 2), labels[k]);
    EXPECT_EQ(be(d, at + 2, 1), 0xcbu);  // statuses, wall time, thread, counters
    at += 5 + 12;
    ASSERT_EQ(be(d, at, 1), 2u);
    ins += k;
    EXPECT_EQ(be(d, at + 1, 8), ins);
    EXPECT_EQ(be(d, at + 9, 8), ins);
    EXPECT_EQ(be(d, at + 17, 8), 10 * ins);
    EXPECT_EQ(be(d, at + 25, 8), 10 * ins);
    at += 1 + 32;
    if (labels[k] == 124) at += 4 + 0;  // argc 0: the manifest has no command
    if (labels[k] == 52) at += 2;       // comm
  }
  EXPECT_EQ(be(d, at, 2), 293u);  // end of stream
  // The index's counter label record: 2 names.
  const std::size_t perflbl = be(d, d.size() - 64 + 24, 8);
  EXPECT_EQ(be(d, perflbl, 4), 2u);
  EXPECT_EQ(be(d, perflbl + 4, 2), 12u);
  EXPECT_EQ(std::string(d.begin() + static_cast<long>(perflbl) + 6,
                        d.begin() + static_cast<long>(perflbl) + 18),
            "PAPI_TOT_INS");
}

}  // namespace
}  // namespace encore
