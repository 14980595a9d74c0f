// Stable handle ids: predefined handles get fixed ids, created objects fresh ids that are
// never reused, even when MPI hands out the same handle value again after a free.
#include "handle_ids.hpp"
#include <gtest/gtest.h>
#include <mpi.h>

#include "encore/event_format.hpp"

using encore::HandleKind;
using encore::dump::HandleIds;
namespace ef = encore::event_format;

TEST(HandleIds, PredefinedAndNull) {
  HandleIds comms(HandleKind::comm);
  EXPECT_EQ(comms.lookup(MPI_COMM_NULL), ef::kNullId);
  const auto world = comms.lookup(MPI_COMM_WORLD);
  const auto self = comms.lookup(MPI_COMM_SELF);
  EXPECT_GE(world, ef::kFirstPredefinedId);
  EXPECT_LT(world, ef::kFirstDynamicId);
  EXPECT_NE(world, self);
  HandleIds other(HandleKind::comm);
  EXPECT_EQ(other.lookup(MPI_COMM_WORLD), world);  // the same in every rank and run
}

TEST(HandleIds, UnknownHandle) {
  HandleIds types(HandleKind::datatype);
  EXPECT_EQ(types.lookup(0x12345678), ef::kUnknownId);
}

TEST(HandleIds, ReusedHandleValueGetsANewId) {
  HandleIds comms(HandleKind::comm);
  MPI_Comm a;
  MPI_Comm_dup(MPI_COMM_WORLD, &a);
  const auto first = comms.create(a);
  EXPECT_GE(first, ef::kFirstDynamicId);
  EXPECT_EQ(comms.lookup(a), first);
  const MPI_Comm freed_value = a;
  EXPECT_EQ(comms.release(a), first);
  MPI_Comm_free(&a);
  EXPECT_EQ(comms.lookup(freed_value), ef::kUnknownId);
  MPI_Comm b;
  MPI_Comm_dup(MPI_COMM_WORLD, &b);
  const auto second = comms.create(b);
  EXPECT_NE(second, first);  // whether or not MPICH reused the value
  EXPECT_EQ(comms.lookup(b), second);
  MPI_Comm_free(&b);
}

TEST(HandleIds, CacheDoesNotOutliveARelease) {
  HandleIds types(HandleKind::datatype);
  const auto id = types.create(0x4c000999);
  EXPECT_EQ(types.lookup(0x4c000999), id);  // now cached
  types.release(0x4c000999);
  EXPECT_EQ(types.lookup(0x4c000999), ef::kUnknownId);
  EXPECT_NE(types.create(0x4c000999), id);
}

TEST(HandleIds, HandlesSharingACacheSlotKeepTheirIds) {
  // The cache is direct-mapped: find created handles that land in the same slot.
  HandleIds comms(HandleKind::comm);
  const std::int64_t a = 0x84000001;
  std::int64_t b = a + 1;
  while (HandleIds::slot(b) != HandleIds::slot(a)) ++b;
  std::int64_t c = b + 1;
  while (HandleIds::slot(c) != HandleIds::slot(a)) ++c;
  const auto ida = comms.create(a);
  const auto idb = comms.create(b);
  const auto idc = comms.create(c);
  for (int round = 0; round < 3; ++round) {  // each lookup evicts the other from the cache
    EXPECT_EQ(comms.lookup(a), ida);
    EXPECT_EQ(comms.lookup(b), idb);
    EXPECT_EQ(comms.lookup(a), ida);
    EXPECT_EQ(comms.lookup(c), idc);
  }
  EXPECT_EQ(comms.release(b), idb);
  EXPECT_EQ(comms.lookup(b), ef::kUnknownId);
  EXPECT_EQ(comms.lookup(a), ida);
  EXPECT_EQ(comms.lookup(c), idc);
  // A predefined handle in a slot a created one used keeps its fixed id.
  EXPECT_EQ(comms.lookup(MPI_COMM_WORLD), HandleIds(HandleKind::comm).lookup(MPI_COMM_WORLD));
}

TEST(HandleIds, LastHandleFoundIsForgottenOnFreeAndReuse) {
  // The handle looked up last is answered without the cache slot: freeing it, then creating
  // an object with the same handle value, must give the new id at once.
  HandleIds comms(HandleKind::comm);
  const std::int64_t h = 0x84000007;
  const auto first = comms.create(h);
  EXPECT_EQ(comms.lookup(h), first);
  EXPECT_EQ(comms.lookup(h), first);  // the last-found entry answers now
  EXPECT_EQ(comms.release(h), first);
  EXPECT_EQ(comms.lookup(h), ef::kUnknownId);
  const auto second = comms.create(h);
  EXPECT_NE(second, first);
  EXPECT_EQ(comms.lookup(h), second);
  EXPECT_EQ(comms.lookup(h), second);
  // Created again without a release seen (the value reused by a new object): still the new id.
  const auto third = comms.create(h);
  EXPECT_NE(third, second);
  EXPECT_EQ(comms.lookup(h), third);
}

TEST(HandleIds, AlternatingHandlesKeepTheirIds) {
  HandleIds comms(HandleKind::comm);
  const auto world = comms.lookup(MPI_COMM_WORLD);
  const std::int64_t a = 0x84000003;
  const auto ida = comms.create(a);
  for (int round = 0; round < 3; ++round) {
    EXPECT_EQ(comms.lookup(MPI_COMM_WORLD), world);
    EXPECT_EQ(comms.lookup(a), ida);
    EXPECT_EQ(comms.lookup(MPI_COMM_NULL), ef::kNullId);  // never cached
  }
  EXPECT_EQ(comms.release(a), ida);
  EXPECT_EQ(comms.lookup(a), ef::kUnknownId);
  EXPECT_EQ(comms.lookup(MPI_COMM_WORLD), world);
}
