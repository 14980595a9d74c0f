// Outstanding requests: a handle value may stand for several requests (MPICH shares one for
// operations that complete at once); retiring forgets exactly the completed ones.
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
