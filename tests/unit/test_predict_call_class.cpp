// The per-function facts the models look up once: EventArgs finds the same arguments as
// arg_of for every function and role, and the precomputed flags match what they stand for.
#include "call_class.hpp"
#include <gtest/gtest.h>

#include "encore/event.hpp"

namespace encore {
namespace {

using predict::EventArgs;

constexpr std::size_t kRoles = predict::detail::kRoles;

// Every argument present, holding its position + 1; every third one absent when `gaps`.
Event numbered(std::uint16_t f, bool gaps) {
  Event e;
  e.function = f;
  e.args.resize(function_table()[f].params.size());
  for (std::size_t i = 0; i < e.args.size(); ++i) {
    e.args[i].present = !gaps || i % 3 != 1;
    e.args[i].scalar = static_cast<std::int64_t>(i + 1);
  }
  return e;
}

void expect_same_lookups(const Event& e) {
  const EventArgs a(e);
  for (std::size_t r = 0; r < kRoles; ++r)
    for (int nth = 0; nth < 2; ++nth) {
      const Role role = static_cast<Role>(r);
      ASSERT_EQ(a.get(role, nth), predict::arg_of(e, role, nth))
          << e.info().name << " role " << r << " nth " << nth;
      ASSERT_EQ(a.scalar(role, nth, -7), predict::scalar_of(e, role, nth, -7));
    }
}

TEST(PredictCallClass, EventArgsFindWhatArgOfFinds) {
  for (std::size_t f = 0; f < function_table().size(); ++f) {
    const auto id = static_cast<std::uint16_t>(f);
    expect_same_lookups(numbered(id, false));
    expect_same_lookups(numbered(id, true));
    Event cut = numbered(id, false);  // fewer values than parameters: the rest are not found
    cut.args.resize(cut.args.size() / 2);
    expect_same_lookups(cut);
  }
}

TEST(PredictCallClass, EventArgsOfASendNameItsPeerAndTag) {
  Event e = numbered(fn::Send, false);
  const EventArgs a(e);
  ASSERT_NE(a.get(Role::peer), nullptr);
  ASSERT_NE(a.get(Role::tag), nullptr);
  EXPECT_NE(a.scalar(Role::peer), a.scalar(Role::tag));
  EXPECT_EQ(a.get(Role::root), nullptr);
  EXPECT_EQ(a.scalar(Role::root, 0, 42), 42);
}

TEST(PredictCallClass, PrecomputedFlagsMatchTheirDefinitions) {
  for (std::size_t f = 0; f < function_table().size(); ++f) {
    const auto id = static_cast<std::uint16_t>(f);
    const predict::CallClass& c = predict::classify(id);
    EXPECT_EQ(c.moves, predict::moves_data(c.op)) << function_table()[f].name;
    EXPECT_EQ(c.shapes, predict::shapes_context(numbered(id, false))) << function_table()[f].name;
  }
  EXPECT_TRUE(predict::classify(fn::Isend).moves);
  EXPECT_FALSE(predict::classify(fn::Waitall).moves);
  EXPECT_TRUE(predict::classify(fn::Comm_split).shapes);
}

TEST(PredictCallClass, NonblockingCollectivesAreClassedByTheirBlockingKind) {
  // "Iallreduce" starts an Allreduce: the name after the I is capitalised before the lookup.
  EXPECT_EQ(predict::classify(fn::Iallreduce).op, predict::Op::icoll);
  EXPECT_EQ(predict::classify(fn::Iallreduce).coll, predict::CollKind::allreduce);
  EXPECT_EQ(predict::classify(fn::Ibcast).coll, predict::CollKind::bcast);
  EXPECT_EQ(predict::classify(fn::Ibarrier).op, predict::Op::icoll);
  EXPECT_EQ(predict::classify(fn::Ireduce_scatter_block).coll, predict::CollKind::reduce_scatter);
  EXPECT_EQ(predict::classify(fn::Irecv).op, predict::Op::irecv);
}

}  // namespace
}  // namespace encore
