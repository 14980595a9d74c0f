// SegmentShare: the median ratio of one rank's captured segments of a kind to another's,
// with values worked out by hand.
#include <cmath>

#include "segment_share.hpp"
#include <gtest/gtest.h>

namespace encore {
namespace {

using predict::SegmentShare;

TEST(SegmentShare, NoPairNoShare) {
  SegmentShare s;
  EXPECT_FALSE(s.median());
  s.add(1000, 0);  // the source's segment took no time: no ratio
  EXPECT_FALSE(s.median());
}

TEST(SegmentShare, OneStretchedPairDoesNotMoveIt) {
  // Ratios 1, 1, 4 (the capture stretched one of this rank's segments), 1, 1: the median is 1
  // where the sums' ratio is 80 / 50 = 1.6.
  SegmentShare s;
  for (const std::int64_t g : {10000, 10000, 40000, 10000, 10000}) s.add(g, 10000);
  EXPECT_DOUBLE_EQ(*s.median(), 1.0);
}

TEST(SegmentShare, EvenCountTakesTheGeometricMeanOfTheMiddleTwo) {
  // Ratios 0.5, 1, 4, 8: sqrt(1 * 4) = 2.
  SegmentShare s;
  s.add(5000, 10000);
  s.add(10000, 10000);
  s.add(40000, 10000);
  s.add(80000, 10000);
  EXPECT_DOUBLE_EQ(*s.median(), 2.0);
  SegmentShare zero;  // a segment of this rank that took no time is a ratio of 0
  zero.add(0, 10000);
  EXPECT_DOUBLE_EQ(*zero.median(), 0.0);
}

TEST(SegmentShare, PastTheBoundTheKeptPairsSpanTheRun) {
  // Pair i (from 0) has ratio i + 1, 10000 pairs. Kept: pairs 0..4095; at 4096 every other
  // one is dropped (0, 2, .., 4094) and every 2nd kept, up to 8190, where it halves again
  // (0, 4, .., 8188) and every 4th is kept: pairs 0, 4, .., 9996, 2500 of them, ratios
  // 1, 5, .., 9997. The middle two (1250th and 1251st) are 4997 and 5001. Keeping the first
  // 4096 pairs only would have said about 2048.
  SegmentShare s;
  for (std::int64_t i = 0; i < 10000; ++i) s.add(i + 1, 1);
  EXPECT_DOUBLE_EQ(*s.median(), std::sqrt(4997.0 * 5001.0));
}

}  // namespace
}  // namespace encore
