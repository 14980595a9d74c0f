// The loggps engine's channel table: first-in first-out per channel, channels found again by
// their key, and a size bounded by the channels holding posts however many were ever used.
#include "channel_table.hpp"
#include <gtest/gtest.h>

namespace encore::predict {
namespace {

using Table = ChannelTable<int, long>;

TEST(PredictChannels, FirstInFirstOutPerChannel) {
  Table t;
  t.get({0, 1, 0, 5}).sends.push(1);
  t.get({0, 1, 0, 6}).sends.push(10);
  t.get({0, 1, 0, 5}).sends.push(2);
  t.get({1, 0, 0, 5}).recvs.push(7);
  EXPECT_EQ(t.get({0, 1, 0, 5}).sends.pop(), 1);
  EXPECT_EQ(t.get({0, 1, 0, 6}).sends.pop(), 10);
  EXPECT_EQ(t.get({0, 1, 0, 5}).sends.pop(), 2);
  EXPECT_TRUE(t.get({0, 1, 0, 5}).empty());
  EXPECT_TRUE(t.get({0, 1, 0, 6}).empty());
  EXPECT_FALSE(t.get({1, 0, 0, 5}).empty());
  EXPECT_EQ(t.get({1, 0, 0, 5}).recvs.pop(), 7);
}

TEST(PredictChannels, PostsSurviveGrowth) {
  // 5000 busy channels force several rebuilds; every post must still be on its channel.
  Table t;
  for (int i = 0; i < 5000; ++i) t.get({static_cast<std::uint32_t>(i % 7), 1, 0, i}).sends.push(i);
  for (int i = 4999; i >= 0; --i) {
    auto& c = t.get({static_cast<std::uint32_t>(i % 7), 1, 0, i});
    ASSERT_FALSE(c.sends.empty()) << i;
    EXPECT_EQ(c.sends.pop(), i);
    EXPECT_TRUE(c.empty());
  }
}

TEST(PredictChannels, HintsFindTheirChannelAndSurviveRebuilds) {
  // A hint names the channel it last found; after the table is rebuilt (growth moves the
  // channels) an old hint must not be trusted, and a hint for another key must not match.
  Table t;
  Table::Hint h;
  t.get({0, 1, 0, 5}, h).sends.push(1);
  EXPECT_EQ(&t.get({0, 1, 0, 5}, h), &t.get({0, 1, 0, 5}));
  t.get({0, 1, 0, 6}, h).sends.push(2);  // same hint, other key: found by hashing
  for (int i = 0; i < 1000; ++i) t.get({2, 3, 0, i}).sends.push(i);  // rebuilds
  EXPECT_EQ(&t.get({0, 1, 0, 6}, h), &t.get({0, 1, 0, 6}));
  EXPECT_EQ(t.get({0, 1, 0, 6}, h).sends.pop(), 2);
  EXPECT_EQ(t.get({0, 1, 0, 5}, h).sends.pop(), 1);
}

TEST(PredictChannels, EmptyChannelsDoNotAccumulate) {
  // A new tag for every message (a pattern some programs have): 200 000 channels used,
  // never more than one busy at a time, so the table stays at its minimum size.
  Table t;
  const std::size_t start = t.capacity();
  for (int i = 0; i < 200000; ++i) {
    auto& c = t.get({0, 1, 0, i});
    c.sends.push(i);
    EXPECT_EQ(t.get({0, 1, 0, i}).sends.pop(), i);
  }
  EXPECT_EQ(t.capacity(), start);
}

}  // namespace
}  // namespace encore::predict
