// Clock offsets in the manifest (clock_sync): round trip, interpolation between the MPI_Init
// and MPI_Finalize estimates, and the offsets' bookkeeping for older traces.
#include <filesystem>
#include <fstream>
#include <string>

#include "temp_dir_test.hpp"
#include <gtest/gtest.h>

#include "encore/clock.hpp"
#include "encore/error.hpp"
#include "encore/manifest.hpp"

namespace {

using namespace encore;
using nlohmann::json;
namespace fs = std::filesystem;

RankInfo drifting() {
  RankInfo r;
  r.rank = 1;
  r.clock_offset_ns = -5000;
  r.sync_init = ClockSync{-5000, 1'000'000, 40, "shared clock"};
  r.sync_end = ClockSync{-3000, 3'000'000, 60, "shared clock"};
  return r;
}

TEST(ClockOffsets, WithoutBothEstimatesTheOffsetIsConstant) {
  RankInfo r;
  r.clock_offset_ns = 777;
  EXPECT_EQ(r.offset_at(0), 777);
  EXPECT_EQ(r.offset_at(1'000'000'000), 777);
  EXPECT_EQ(r.lowest_offset(), 777);
  r.sync_init = ClockSync{777, 10, 1, "round trips"};
  EXPECT_EQ(r.offset_at(1'000'000'000), 777);
}

TEST(ClockOffsets, InterpolatedBetweenTheEstimatesHeldOutside) {
  const RankInfo r = drifting();
  EXPECT_EQ(r.offset_at(1'000'000), -5000);
  EXPECT_EQ(r.offset_at(2'000'000), -4000);
  EXPECT_EQ(r.offset_at(1'500'000), -4500);
  EXPECT_EQ(r.offset_at(3'000'000), -3000);
  EXPECT_EQ(r.offset_at(0), -5000);
  EXPECT_EQ(r.offset_at(9'000'000), -3000);
  EXPECT_EQ(r.lowest_offset(), -5000);
}

TEST(ClockOffsets, ShiftedTimesStayInOrder) {
  // A drift of 2 us over 2 ms (1000 ppm): a time 1 ns later never maps earlier.
  const RankInfo r = drifting();
  std::int64_t last = r.offset_at(999'000) + 999'000;
  for (std::int64_t t = 999'001; t < 3'001'000; t += 7) {
    const std::int64_t mapped = t + r.offset_at(t);
    ASSERT_GE(mapped, last) << t;
    last = mapped;
  }
}

TEST(ClockOffsets, EstimatesWithTheirEndsOutOfOrderAreNotInterpolated) {
  RankInfo r = drifting();
  r.sync_end->at_ns = r.sync_init->at_ns;
  EXPECT_EQ(r.offset_at(5'000'000), -5000);
}

class ClockSyncManifest : public TempDirTest {
 protected:
  Manifest sample() {
    Manifest m;
    m.nprocs = 2;
    m.function_table = {"9f86d081884c7d65", {"MPI_Init"}};
    for (std::uint32_t r = 0; r < 2; ++r) {
      RankInfo info = r == 0 ? RankInfo{} : drifting();
      info.rank = r;
      if (r == 0) info.sync_init = info.sync_end = ClockSync{0, 5, 0, "self"};
      m.ranks.push_back(info);
    }
    return m;
  }
  fs::path path() const { return dir_ / "manifest.json"; }
};

TEST_F(ClockSyncManifest, RoundTrip) {
  save_manifest(sample(), path());
  const Manifest back = load_manifest(path());
  ASSERT_TRUE(back.ranks[1].sync_init && back.ranks[1].sync_end);
  EXPECT_EQ(back.ranks[1].sync_end->offset_ns, -3000);
  EXPECT_EQ(back.ranks[1].sync_end->at_ns, 3'000'000u);
  EXPECT_EQ(back.ranks[1].sync_end->error_ns, 60u);
  EXPECT_EQ(back.ranks[1].sync_init->method, "shared clock");
  EXPECT_EQ(back.ranks[0].sync_init->method, "self");
  EXPECT_EQ(back.ranks[1].offset_at(2'000'000), -4000);
  json doc;
  std::ifstream(path()) >> doc;
  EXPECT_EQ(doc["ranks"][1]["clock_offset_end_ns"], -3000);  // the key older readers know
}

TEST_F(ClockSyncManifest, DroppedEstimatesLeaveNoStaleKeys) {
  save_manifest(sample(), path());
  Manifest m = load_manifest(path());
  m.ranks[1].sync_init.reset();
  m.ranks[1].sync_end.reset();
  save_manifest(m, path());
  const Manifest back = load_manifest(path());
  EXPECT_FALSE(back.ranks[1].sync_init);
  EXPECT_FALSE(back.ranks[1].sync_end);
}

TEST_F(ClockSyncManifest, AnUnknownMethodIsNamed) {
  json doc = manifest_to_json(sample());
  doc["ranks"][1]["clock_sync"]["finalize"]["method"] = "ntp";
  std::ofstream(path()) << doc.dump();
  try {
    load_manifest(path());
    FAIL() << "loaded";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("ranks[1].clock_sync.finalize.method"), std::string::npos) << what;
    EXPECT_NE(what.find("ntp"), std::string::npos) << what;
  }
}

TEST(ClockPairs, APairsMonotonicReadLiesBetweenReadsAroundIt) {
  const Clock c(ClockSource::tsc);
  const std::uint64_t before = monotonic_ns();
  const ClockPair p = c.pair();
  const std::uint64_t after = monotonic_ns();
  EXPECT_GE(p.mono_ns, before);
  EXPECT_LE(p.mono_ns, after);
  EXPECT_LT(p.width_ticks, after - before + 1'000'000'000ull);  // a real width, not the sentinel
}

}  // namespace
