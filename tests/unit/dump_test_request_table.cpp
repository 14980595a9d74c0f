// Outstanding requests: a handle value may stand for several requests (MPICH shares one for
// operations that complete at once); retiring forgets exactly the completed ones; a request
// array resolves in one pass to what find() names.
#include <vector>

#include "request_table.hpp"
#include <gtest/gtest.h>
#include <mpi.h>

using encore::dump::RequestSlot;
using encore::dump::RequestTable;

TEST(RequestTable, SharedHandleNamesTheOldestFirst) {
  RequestTable t;
  const MPI_Request h = 0x2c000001;
  t.add(h).event = 10;
  t.add(h).event = 11;
  ASSERT_NE(t.find({h, 1}), nullptr);
  EXPECT_EQ(t.find({h, 0})->event, 10u);
  EXPECT_EQ(t.find({h, 1})->event, 11u);
  EXPECT_EQ(t.newest(h)->event, 11u);
  EXPECT_EQ(t.find({h, 2}), nullptr);
  EXPECT_EQ(t.find({MPI_REQUEST_NULL, 0}), nullptr);
}

TEST(RequestTable, RetireForgetsExactlyTheCompleted) {
  RequestTable t;
  const MPI_Request h = 0x2c000001, g = 0x2c000002;
  t.add(h).event = 1;
  t.add(h).event = 2;
  t.add(h).event = 3;
  t.add(g).event = 4;
  // Completed in one call, given in any order: occurrences refer to the state before it.
  std::vector<RequestSlot> done{{h, 0}, {g, 0}, {h, 2}};
  t.retire(done);
  ASSERT_NE(t.find({h, 0}), nullptr);
  EXPECT_EQ(t.find({h, 0})->event, 2u);
  EXPECT_EQ(t.find({h, 1}), nullptr);
  EXPECT_EQ(t.find({g, 0}), nullptr);
  EXPECT_EQ(t.newest(g), nullptr);  // an emptied entry is kept but names nothing
  // The handle value is reused for a new request.
  t.add(g).event = 5;
  EXPECT_EQ(t.find({g, 0})->event, 5u);
  EXPECT_EQ(t.newest(g)->event, 5u);
  std::vector<RequestSlot> again{{h, 0}, {h, 0}};  // a stale duplicate is ignored
  t.retire(again);
  EXPECT_EQ(t.find({h, 0}), nullptr);
}

TEST(RequestTable, ResolveGivesTheKthAppearanceTheKthOldest) {
  RequestTable t;
  const MPI_Request h = 0x2c000001, g = 0x2c000002, unknown = 0x2c000003;
  t.add(h).event = 1;
  t.add(g).event = 2;
  t.add(h).event = 3;
  const std::vector<MPI_Request> r{h, MPI_REQUEST_NULL, g, h, h, unknown, g};
  std::vector<encore::dump::RequestInfo*> out(r.size());
  t.resolve(r.data(), r.size(), out.data());
  ASSERT_NE(out[0], nullptr);
  ASSERT_NE(out[2], nullptr);
  ASSERT_NE(out[3], nullptr);
  EXPECT_EQ(out[0]->event, 1u);
  EXPECT_EQ(out[1], nullptr);  // MPI_REQUEST_NULL
  EXPECT_EQ(out[2]->event, 2u);
  EXPECT_EQ(out[3]->event, 3u);
  EXPECT_EQ(out[4], nullptr);  // a third appearance of h: no third request
  EXPECT_EQ(out[5], nullptr);
  EXPECT_EQ(out[6], nullptr);
  // As find() names them, and again in a second pass (claims last one pass only).
  t.resolve(r.data(), r.size(), out.data());
  EXPECT_EQ(out[0], t.find({h, 0}));
  EXPECT_EQ(out[3], t.find({h, 1}));
  EXPECT_EQ(out[2], t.find({g, 0}));
}

TEST(RequestTable, RetiredPointerLeavesTheOthersValid) {
  RequestTable t;
  const MPI_Request h = 0x2c000001;
  std::vector<encore::dump::RequestInfo*> live;
  for (int i = 0; i < 5; ++i) {
    encore::dump::RequestInfo& info = t.add(h);
    info.event = static_cast<std::uint64_t>(i);
    live.push_back(&info);
  }
  t.retire(live[2]);  // the middle one
  t.retire(live[0]);  // the oldest
  t.retire(live[4]);  // the newest
  t.retire(live[4]);  // again: nothing
  EXPECT_EQ(t.find({h, 0}), live[1]);
  EXPECT_EQ(t.find({h, 1}), live[3]);
  EXPECT_EQ(t.find({h, 2}), nullptr);
  EXPECT_EQ(t.newest(h), live[3]);
  // Many handle values (the index grows) and a reused node start clean.
  for (MPI_Request v = 0x2c000100; v < 0x2c000400; ++v)
    t.add(v).event = static_cast<std::uint64_t>(v);
  for (MPI_Request v = 0x2c000100; v < 0x2c000400; ++v) {
    ASSERT_NE(t.find({v, 0}), nullptr);
    EXPECT_EQ(t.find({v, 0})->event, static_cast<std::uint64_t>(v));
  }
  t.find({0x2c000100, 0})->kind = encore::dump::RequestKind::recv;
  t.retire(t.find({0x2c000100, 0}));
  const encore::dump::RequestInfo& again = t.add(0x2c000100);
  EXPECT_EQ(again.kind, encore::dump::RequestKind::other);
  EXPECT_EQ(again.event, 0u);
  EXPECT_EQ(t.find({h, 0}), live[1]);
}

// A retired request's node is reused for the next one: nothing of the old request may show
// through (a recycled node that kept `captured` dropped a persistent receive's data).
TEST(RequestTable, ARecycledRequestStartsAsANewOne) {
  RequestTable t;
  const MPI_Request h = 0x2c000001, g = 0x2c000002;
  encore::dump::RequestInfo& old = t.add(h);
  old.event = 7;
  old.kind = encore::dump::RequestKind::recv;
  old.persistent = true;
  old.status_unset = true;
  old.captured = true;
  old.layout.push_back({nullptr, 3, MPI_INT});
  t.retire(&old);
  encore::dump::RequestInfo& fresh = t.add(g);
  EXPECT_EQ(&fresh, &old);  // the same node, recycled
  EXPECT_EQ(fresh.event, 0u);
  EXPECT_EQ(fresh.kind, encore::dump::RequestKind::other);
  EXPECT_FALSE(fresh.persistent);
  EXPECT_FALSE(fresh.status_unset);
  EXPECT_FALSE(fresh.captured);
  EXPECT_TRUE(fresh.layout.empty());
}
