// message_bytes works from a table built per function id; this holds it against the name-
// matching version it replaced (kept here as the reference), for every function of the table
// and a spread of arguments: root or not, known or unknown types and communicators, lists,
// recorded hashes, payloads and statuses, failed calls.
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "encore/event_format.hpp"
#include "encore/rank_context.hpp"

namespace encore {
namespace {

std::string_view strip(std::string_view name) {
  if (name.rfind("MPI_", 0) == 0) name.remove_prefix(4);
  if (name.size() > 2 && name.substr(name.size() - 2) == "_c") name.remove_suffix(2);
  return name;
}

std::int64_t sum(const std::vector<std::int64_t>& v) {
  std::int64_t s = 0;
  for (const auto x : v) s += x;
  return s;
}

std::uint64_t clamp(std::int64_t v) { return v < 0 ? 0 : static_cast<std::uint64_t>(v); }

// The reference: message_bytes as it was, finding everything by name.
MessageBytes by_names(const RankContext& ctx, const Event& e) {
  MessageBytes m;
  const FunctionInfo& f = e.info();
  if (!f.modelled || e.rc != 0) return m;
  std::string_view name = strip(f.name);
  auto size_of = [&](std::string_view count, std::string_view type) -> std::uint64_t {
    const ArgValue* c = find_arg(e, count);
    const ArgValue* t = find_arg(e, type);
    if (!c || !t) return 0;
    const auto s = ctx.type_size(static_cast<std::uint64_t>(t->scalar));
    if (!s) {
      m.known = false;
      return 0;
    }
    if (c->list.empty()) return clamp(c->scalar) * *s;
    return clamp(sum(c->list)) * *s;
  };
  std::uint64_t payload = 0;
  for (const auto& p : e.payloads) payload += p.bytes;
  std::uint64_t hashed = 0;
  for (const auto& h : e.send_hashes) hashed += h.bytes;
  auto status_bytes = [&e, &f]() {
    std::uint64_t n = 0;
    for (std::size_t i = 0; i < f.params.size() && i < e.args.size(); ++i)  // not stale ones
      for (const auto& s : e.args[i].statuses) n += s.bytes;
    return n;
  };
  if (f.category == Category::completion) {
    m.received = !e.payloads.empty() ? payload : status_bytes();
    return m;
  }
  if (f.category == Category::p2p) {
    const bool is_persistent = name.size() > 5 && name.substr(name.size() - 5) == "_init";
    if (name.find("send") != std::string_view::npos ||
        name.find("Send") != std::string_view::npos) {
      if (name.rfind("Sendrecv", 0) == 0) {
        m.sent = !e.send_hashes.empty()       ? hashed
                 : name == "Sendrecv_replace" ? size_of("count", "datatype")
                                              : size_of("sendcount", "sendtype");
        m.received = !e.payloads.empty() ? payload : status_bytes();
      } else {
        m.sent = !e.send_hashes.empty() ? hashed : size_of("count", "datatype");
      }
    } else if (!is_persistent && (name == "Recv" || name == "Mrecv")) {
      m.received = !e.payloads.empty() ? payload : status_bytes();
    }
    return m;
  }
  if (f.category != Category::collective) return m;
  std::string blocking;  // nonblocking: same buffers ("Iallreduce" -> "Allreduce")
  if (name.size() > 1 && name[0] == 'I' && name[1] >= 'a' && name[1] <= 'z') {
    blocking.assign(name.substr(1));
    blocking[0] = static_cast<char>(blocking[0] - 'a' + 'A');
    name = blocking;
  }
  if (name.size() > 5 && name.substr(name.size() - 5) == "_init") name.remove_suffix(5);
  if (name.rfind("Neighbor_", 0) == 0) {
    m.known = false;
    return m;
  }
  const ArgValue* comm_arg = find_arg(e, "comm");
  const CommInfo* comm =
      comm_arg ? ctx.comm(static_cast<std::uint64_t>(comm_arg->scalar)) : nullptr;
  if (!comm && name != "Reduce_local") {
    m.known = false;
    return m;
  }
  const std::uint64_t n = comm ? clamp(comm->size()) : 1;
  const ArgValue* root_arg = find_arg(e, "root");
  const bool root = root_arg && comm && root_arg->scalar == comm->rank;
  if (name == "Bcast") {
    (root ? m.sent : m.received) = size_of("count", "datatype");
  } else if (name == "Reduce") {
    m.sent = size_of("count", "datatype");
    if (root) m.received = m.sent;
  } else if (name == "Allreduce" || name == "Scan" || name == "Exscan" || name == "Reduce_local") {
    m.sent = m.received = size_of("count", "datatype");
  } else if (name == "Gather" || name == "Gatherv") {
    m.sent = size_of("sendcount", "sendtype");
    if (root)
      m.received = (name == "Gather" ? n : 1) *
                   size_of(name == "Gather" ? "recvcount" : "recvcounts", "recvtype");
  } else if (name == "Scatter" || name == "Scatterv") {
    m.received = size_of("recvcount", "recvtype");
    if (root)
      m.sent = (name == "Scatter" ? n : 1) *
               size_of(name == "Scatter" ? "sendcount" : "sendcounts", "sendtype");
  } else if (name == "Allgather") {
    m.sent = size_of("sendcount", "sendtype");
    m.received = n * size_of("recvcount", "recvtype");
  } else if (name == "Allgatherv") {
    m.sent = size_of("sendcount", "sendtype");
    m.received = size_of("recvcounts", "recvtype");
  } else if (name == "Alltoall") {
    m.sent = n * size_of("sendcount", "sendtype");
    m.received = n * size_of("recvcount", "recvtype");
  } else if (name == "Alltoallv") {
    m.sent = size_of("sendcounts", "sendtype");
    m.received = size_of("recvcounts", "recvtype");
  } else if (name == "Alltoallw") {
    auto w = [&](std::string_view counts, std::string_view types) {
      const ArgValue* c = find_arg(e, counts);
      const ArgValue* t = find_arg(e, types);
      std::uint64_t bytes = 0;
      for (std::size_t i = 0; c && t && i < c->list.size() && i < t->list.size(); ++i) {
        const auto s = ctx.type_size(static_cast<std::uint64_t>(t->list[i]));
        if (!s)
          m.known = false;
        else
          bytes += clamp(c->list[i]) * *s;
      }
      return bytes;
    };
    m.sent = w("sendcounts", "sendtypes");
    m.received = w("recvcounts", "recvtypes");
  } else if (name == "Reduce_scatter") {
    m.sent = size_of("recvcounts", "datatype");
    const ArgValue* c = find_arg(e, "recvcounts");
    const ArgValue* t = find_arg(e, "datatype");
    const auto s = t ? ctx.type_size(static_cast<std::uint64_t>(t->scalar)) : std::nullopt;
    if (c && s && comm->rank >= 0 && static_cast<std::size_t>(comm->rank) < c->list.size())
      m.received = clamp(c->list[static_cast<std::size_t>(comm->rank)]) * *s;
  } else if (name == "Reduce_scatter_block") {
    m.received = size_of("recvcount", "datatype");
    m.sent = n * m.received;
  }
  return m;
}

std::int64_t predefined(HandleKind kind, std::string_view name) {
  const auto all = predefined_handles(kind);
  for (std::size_t i = 0; i < all.size(); ++i)
    if (name == all[i].name) return static_cast<std::int64_t>(event_format::kFirstPredefinedId + i);
  ADD_FAILURE() << name << " is not predefined";
  return 0;
}

// One variant of the arguments: every parameter filled by its name and role.
struct Variant {
  std::int64_t type;  // for datatype parameters and type lists
  std::int64_t comm;
  std::int64_t root;
  bool lists;  // counts as lists (v and w collectives) as well as scalars
  bool hashes, payloads, statuses;
  std::int32_t rc;
};

Event build(std::uint16_t f, const Variant& v) {
  Event e;
  e.function = f;
  e.rc = v.rc;
  const auto params = function_table()[f].params;
  e.args.resize(params.size());
  for (std::size_t i = 0; i < params.size(); ++i) {
    ArgValue& a = e.args[i];
    a.present = true;
    const std::string_view name = params[i].name;
    const Role role = params[i].role;
    if (role == Role::comm) a.scalar = v.comm;
    if (role == Role::datatype || name.find("type") != std::string_view::npos) a.scalar = v.type;
    if (name == "root") a.scalar = v.root;
    if (name.find("count") != std::string_view::npos) {
      a.scalar = 3 + static_cast<std::int64_t>(i);
      if (v.lists) a.list = {1, 2, 3, -4};  // a negative total is clamped to 0 only as a sum
    }
    if (name.find("types") != std::string_view::npos) a.list = {v.type, v.type, 999, v.type};
    if (v.statuses && (role == Role::status_out || role == Role::status_array))
      a.statuses = {StatusRecord{0, 1, 2, 40, 0}, StatusRecord{0, 1, 2, 24, 0}};
  }
  if (v.hashes) e.send_hashes = {{1, 7}, {2, 9}};
  if (v.payloads) e.payloads = {PayloadRef{0, 0, 1, 33, 0}};
  return e;
}

TEST(RankContextSizes, TableMatchesNameRulesForEveryFunction) {
  RankContext ctx(1, 4);
  const std::int64_t world = predefined(HandleKind::comm, "MPI_COMM_WORLD");
  const std::int64_t dbl = predefined(HandleKind::datatype, "MPI_DOUBLE");
  const std::int64_t pair = predefined(HandleKind::datatype, "MPI_DOUBLE_INT");
  std::vector<Variant> variants;
  for (const std::int64_t type : {dbl, pair, std::int64_t{999}})
    for (const std::int64_t comm : {world, std::int64_t{4242}})
      for (const std::int64_t root : {0, 1})
        for (const bool lists : {false, true})
          for (const int extras : {0, 1, 2, 3, 4, 5, 6, 7})
            variants.push_back({type, comm, root, lists, (extras & 1) != 0, (extras & 2) != 0,
                                (extras & 4) != 0, 0});
  variants.push_back({dbl, world, 1, false, true, true, true, 1});  // failed: nothing
  std::size_t compared = 0, nonzero = 0, unknown = 0;
  for (std::uint16_t f = 0; f < function_table().size(); ++f)
    for (const Variant& v : variants) {
      const Event e = build(f, v);
      const MessageBytes want = by_names(ctx, e), got = message_bytes(ctx, e);
      ASSERT_EQ(got.sent, want.sent) << function_table()[f].name;
      ASSERT_EQ(got.received, want.received) << function_table()[f].name;
      ASSERT_EQ(got.known, want.known) << function_table()[f].name;
      ++compared;
      nonzero += want.sent + want.received != 0;
      unknown += !want.known;
    }
  // The spread reaches the interesting cases, not only zeros.
  EXPECT_GT(nonzero, compared / 20);
  EXPECT_GT(unknown, 100u);
}

TEST(RankContextSizes, PredefinedPairTypes) {
  RankContext ctx(0, 2);
  EXPECT_EQ(
      ctx.type_size(static_cast<std::uint64_t>(predefined(HandleKind::datatype, "MPI_FLOAT_INT"))),
      8u);
  EXPECT_EQ(
      ctx.type_size(static_cast<std::uint64_t>(predefined(HandleKind::datatype, "MPI_SHORT_INT"))),
      6u);
  EXPECT_EQ(ctx.type_size(static_cast<std::uint64_t>(predefined(HandleKind::datatype, "MPI_INT"))),
            4u);
  const auto n = predefined_handles(HandleKind::datatype).size();
  EXPECT_FALSE(ctx.type_size(event_format::kFirstPredefinedId + n).has_value());
}

}  // namespace
}  // namespace encore
