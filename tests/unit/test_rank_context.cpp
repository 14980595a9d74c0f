// RankContext: datatype sizes from constructor calls, communicator members, message sizes.
#include <string_view>

#include "predefined_id.hpp"
#include <gtest/gtest.h>

#include "encore/event_format.hpp"
#include "encore/rank_context.hpp"

namespace encore {
namespace {

using testing::predefined;

// An event of `id` whose arguments are set by name.
struct EventBuilder {
  Event e;
  explicit EventBuilder(fn::Id id) {
    e.function = id;
    e.args.resize(e.info().params.size());
    for (auto& a : e.args) a.present = true;
  }
  ArgValue& arg(std::string_view name) {
    const auto& p = e.info().params;
    for (std::size_t i = 0; i < p.size(); ++i)
      if (name == p[i].name) return e.args[i];
    ADD_FAILURE() << "no parameter " << name;
    return e.args[0];
  }
  EventBuilder& set(std::string_view name, std::int64_t v) {
    arg(name).scalar = v;
    return *this;
  }
  EventBuilder& set(std::string_view name, std::vector<std::int64_t> v) {
    arg(name).list = std::move(v);
    return *this;
  }
};

TEST(RankContext, PredefinedSizesFollowMpich) {
  RankContext ctx(0, 4);
  EXPECT_EQ(ctx.type_size(predefined(HandleKind::datatype, "MPI_INT")), 4u);
  EXPECT_EQ(ctx.type_size(predefined(HandleKind::datatype, "MPI_DOUBLE")), 8u);
  EXPECT_EQ(ctx.type_size(predefined(HandleKind::datatype, "MPI_CHAR")), 1u);
  EXPECT_EQ(ctx.type_size(predefined(HandleKind::datatype, "MPI_DOUBLE_INT")), 12u);
  EXPECT_FALSE(ctx.type_size(1234).has_value());
}

TEST(RankContext, DerivedTypeSizes) {
  RankContext ctx(5, 8);
  const auto dbl = static_cast<std::int64_t>(predefined(HandleKind::datatype, "MPI_DOUBLE"));
  const auto chr = static_cast<std::int64_t>(predefined(HandleKind::datatype, "MPI_CHAR"));
  ctx.observe(EventBuilder(fn::Type_vector)
                  .set("count", 10)
                  .set("blocklength", 2)
                  .set("stride", 100)
                  .set("oldtype", dbl)
                  .set("newtype", 1024)
                  .e);
  EXPECT_EQ(ctx.type_size(1024), 160u);
  ctx.observe(EventBuilder(fn::Type_create_struct)
                  .set("array_of_blocklengths", {1, 3})
                  .set("array_of_types", {1024, chr})
                  .set("newtype", 1025)
                  .e);
  EXPECT_EQ(ctx.type_size(1025), 163u);
  ctx.observe(EventBuilder(fn::Type_create_subarray)
                  .set("array_of_subsizes", {3, 4})
                  .set("oldtype", dbl)
                  .set("newtype", 1026)
                  .e);
  EXPECT_EQ(ctx.type_size(1026), 96u);
  // 10 x 7 doubles over a 2 x 4 grid, block rows and cyclic(2) columns; rank 5 = coords (1, 1):
  // rows 5..9 (5), columns {2,3} of 0..6 in rounds of 8 (2).
  ctx.observe(EventBuilder(fn::Type_create_darray)
                  .set("size", 8)
                  .set("rank", 5)
                  .set("array_of_gsizes", {10, 7})
                  .set("array_of_distribs", {121, 122})
                  .set("array_of_dargs", {-49767, 2})
                  .set("array_of_psizes", {2, 4})
                  .set("oldtype", dbl)
                  .set("newtype", 1027)
                  .e);
  EXPECT_EQ(ctx.type_size(1027), 5u * 2u * 8u);
  Event free_event = EventBuilder(fn::Type_free).e;
  free_event.args[0].scalar = 1024;
  ctx.observe(free_event);
  EXPECT_FALSE(ctx.type_size(1024).has_value());
}

// Counts from a damaged trace: no division by zero, no signed overflow (the fuzz round's
// SIGFPE in predict and export), sizes unknown or saturated instead.
TEST(RankContext, DamagedCountsNeitherTrapNorOverflow) {
  RankContext ctx(0, 2);
  const auto dbl = static_cast<std::int64_t>(predefined(HandleKind::datatype, "MPI_DOUBLE"));
  const auto in = static_cast<std::int64_t>(predefined(HandleKind::datatype, "MPI_INT"));
  // A process grid of size 0 (block distribution, default argument): no elements.
  ctx.observe(EventBuilder(fn::Type_create_darray)
                  .set("size", 2)
                  .set("rank", 0)
                  .set("array_of_gsizes", {10, 7})
                  .set("array_of_distribs", {121, 121})
                  .set("array_of_dargs", {-49767, -49767})
                  .set("array_of_psizes", {0, 1})
                  .set("oldtype", dbl)
                  .set("newtype", 1030)
                  .e);
  EXPECT_EQ(ctx.type_size(1030), 0u);
  // count x blocklength past int64: unknown.
  ctx.observe(EventBuilder(fn::Type_vector)
                  .set("count", std::int64_t{1} << 62)
                  .set("blocklength", std::int64_t{1} << 40)
                  .set("stride", 1)
                  .set("oldtype", dbl)
                  .set("newtype", 1031)
                  .e);
  EXPECT_FALSE(ctx.type_size(1031).has_value());
  ctx.observe(EventBuilder(fn::Type_create_subarray)
                  .set("array_of_subsizes", {std::int64_t{1} << 40, std::int64_t{1} << 40})
                  .set("oldtype", dbl)
                  .set("newtype", 1032)
                  .e);
  EXPECT_FALSE(ctx.type_size(1032).has_value());
  // Receive counts that add up past int64: saturated bytes.
  const auto world = static_cast<std::int64_t>(predefined(HandleKind::comm, "MPI_COMM_WORLD"));
  auto gatherv = EventBuilder(fn::Gatherv)
                     .set("sendcount", 1)
                     .set("sendtype", in)
                     .set("recvcounts", {std::int64_t{1} << 62, std::int64_t{1} << 62})
                     .set("recvtype", in)
                     .set("root", 0)
                     .set("comm", world)
                     .e;
  EXPECT_EQ(message_bytes(ctx, gatherv).received, ~std::uint64_t{0});
}

TEST(RankContext, CommunicatorsAndCollectiveBytes) {
  RankContext ctx(2, 4);
  const auto world = predefined(HandleKind::comm, "MPI_COMM_WORLD");
  ASSERT_NE(ctx.comm(world), nullptr);
  EXPECT_EQ(ctx.comm(world)->size(), 4);
  EXPECT_EQ(ctx.comm(world)->rank, 2);
  EventBuilder split(fn::Comm_split);
  split.set("comm", static_cast<std::int64_t>(world));
  split.arg("newcomm").scalar = 1100;
  split.arg("newcomm").list = {0, 2};
  ctx.observe(split.e);
  ASSERT_NE(ctx.comm(1100), nullptr);
  EXPECT_EQ(ctx.comm(1100)->rank, 1);
  const auto in = static_cast<std::int64_t>(predefined(HandleKind::datatype, "MPI_INT"));
  auto gather = EventBuilder(fn::Gather)
                    .set("sendcount", 3)
                    .set("sendtype", in)
                    .set("recvcount", 3)
                    .set("recvtype", in)
                    .set("root", 1)
                    .set("comm", 1100)
                    .e;
  auto m = message_bytes(ctx, gather);
  EXPECT_EQ(m.sent, 12u);
  EXPECT_EQ(m.received, 24u);  // this rank is rank 1 of 2, the root
  EXPECT_TRUE(m.known);
  auto a2a = EventBuilder(fn::Alltoallv)
                 .set("sendcounts", {1, 2, 3, 4})
                 .set("sendtype", in)
                 .set("recvcounts", {4, 4, 4, 4})
                 .set("recvtype", in)
                 .set("comm", static_cast<std::int64_t>(world))
                 .e;
  m = message_bytes(ctx, a2a);
  EXPECT_EQ(m.sent, 40u);
  EXPECT_EQ(m.received, 64u);
  auto send = EventBuilder(fn::Send).set("count", 5).set("datatype", in).e;
  EXPECT_EQ(message_bytes(ctx, send).sent, 20u);
  send.send_hashes.push_back({1, 7});  // an exact record wins over the computed size
  EXPECT_EQ(message_bytes(ctx, send).sent, 7u);
  auto unknown = EventBuilder(fn::Bcast)
                     .set("count", 5)
                     .set("datatype", 999)
                     .set("root", 0)
                     .set("comm", static_cast<std::int64_t>(world))
                     .e;
  EXPECT_FALSE(message_bytes(ctx, unknown).known);
  // A nonblocking collective moves what its blocking form does ("Iallreduce": "Allreduce").
  auto iall = EventBuilder(fn::Iallreduce)
                  .set("count", 6)
                  .set("datatype", in)
                  .set("comm", static_cast<std::int64_t>(world))
                  .e;
  EXPECT_EQ(message_bytes(ctx, iall).sent, 24u);
  EXPECT_EQ(message_bytes(ctx, iall).received, 24u);
}

// The decoder reuses Event::args and leaves entries past the function's parameters stale: a
// completion's received bytes come from its own statuses only.
TEST(RankContext, CompletionIgnoresStaleArguments) {
  RankContext ctx(0, 2);
  EventBuilder wait(fn::Wait);
  StatusRecord mine;
  mine.bytes = 16;
  wait.arg("status").statuses = {mine};
  StatusRecord stale;
  stale.bytes = 1000;
  ArgValue left_over;
  left_over.statuses = {stale, stale};
  wait.e.args.push_back(left_over);
  const auto m = message_bytes(ctx, wait.e);
  EXPECT_TRUE(m.known);
  EXPECT_EQ(m.received, 16u);
}

}  // namespace
}  // namespace encore
