// RankContext::observe skips the calls it cannot learn from by a per-function table: every
// modelled function with a constructor or destructor argument must still take effect.
#include <string_view>

#include "predefined_id.hpp"
#include <gtest/gtest.h>

#include "encore/event_format.hpp"
#include "encore/rank_context.hpp"

namespace encore {
namespace {

constexpr std::int64_t kNew = 1100;  // a dynamic handle id

using testing::predefined;

// Function `id` with every argument present and zero, those of `role` set to kNew and the
// members {0, 2}.
Event with_role(std::uint16_t id, Role role) {
  Event e;
  e.function = id;
  const auto params = e.info().params;
  e.args.resize(params.size());
  for (std::size_t i = 0; i < params.size(); ++i) {
    e.args[i].present = true;
    if (params[i].role != role) continue;
    e.args[i].scalar = kNew;
    e.args[i].list = {0, 2};
  }
  return e;
}

bool has_role(const FunctionInfo& f, Role role) {
  for (const auto& p : f.params)
    if (p.role == role) return true;
  return false;
}

TEST(RankContextObserve, EveryConstructorAndDestructorTakesEffect) {
  const auto fns = function_table();
  std::size_t checked = 0;
  for (std::size_t i = 0; i < fns.size(); ++i) {
    const auto id = static_cast<std::uint16_t>(i);
    if (!fns[i].modelled) continue;
    const std::string name(fns[i].name);
    if (has_role(fns[i], Role::comm_out)) {
      RankContext ctx(2, 4);
      ctx.observe(with_role(id, Role::comm_out));
      EXPECT_NE(ctx.comm(kNew), nullptr) << name;
      ++checked;
    }
    if (has_role(fns[i], Role::group_out)) {
      RankContext ctx(2, 4);
      ctx.observe(with_role(id, Role::group_out));
      EXPECT_NE(ctx.group(kNew), nullptr) << name;
      ++checked;
    }
    if (has_role(fns[i], Role::comm_free)) {
      RankContext ctx(2, 4);
      ctx.observe(with_role(fn::Comm_split, Role::comm_out));
      ASSERT_NE(ctx.comm(kNew), nullptr);
      ctx.observe(with_role(id, Role::comm_free));
      EXPECT_EQ(ctx.comm(kNew), nullptr) << name;
      ++checked;
    }
    if (has_role(fns[i], Role::group_free)) {
      RankContext ctx(2, 4);
      ctx.observe(with_role(fn::Comm_group, Role::group_out));
      ASSERT_NE(ctx.group(kNew), nullptr);
      ctx.observe(with_role(id, Role::group_free));
      EXPECT_EQ(ctx.group(kNew), nullptr) << name;
      ++checked;
    }
    if (has_role(fns[i], Role::datatype_free)) {
      RankContext ctx(2, 4);
      Event contiguous = with_role(fn::Type_contiguous, Role::datatype_out);
      contiguous.args[0].scalar = 3;  // count
      contiguous.args[1].scalar =
          static_cast<std::int64_t>(predefined(HandleKind::datatype, "MPI_INT"));
      ctx.observe(contiguous);
      ASSERT_EQ(ctx.type_size(kNew), 12u);
      ctx.observe(with_role(id, Role::datatype_free));
      EXPECT_EQ(ctx.type_size(kNew), std::nullopt) << name;
      ++checked;
    }
  }
  EXPECT_GE(checked, 10u);  // Comm_split, Comm_dup, Comm_create, ..., Comm_free, Type_free
}

TEST(RankContextObserve, FailedCallsAndOtherCallsLeaveItAlone) {
  RankContext ctx(2, 4);
  Event split = with_role(fn::Comm_split, Role::comm_out);
  split.rc = 1;
  ctx.observe(split);
  EXPECT_EQ(ctx.comm(kNew), nullptr);
  Event send = with_role(fn::Send, Role::comm);  // a communicator argument, not a new one
  ctx.observe(send);
  EXPECT_EQ(ctx.comm(kNew), nullptr);
}

}  // namespace
}  // namespace encore
