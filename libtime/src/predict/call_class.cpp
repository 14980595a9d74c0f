#include "call_class.hpp"

#include <array>
#include <string>
#include <string_view>
#include <vector>

namespace encore::predict {
namespace {

bool one_of(std::string_view name, std::initializer_list<std::string_view> names) {
  for (auto n : names)
    if (name == n) return true;
  return false;
}

bool collective_kind(std::string_view n, CollKind& kind) {
  struct Entry {
    std::string_view name;
    CollKind kind;
  };
  static constexpr Entry kTable[] = {{"Barrier", CollKind::barrier},
                                     {"Bcast", CollKind::bcast},
                                     {"Reduce", CollKind::reduce},
                                     {"Allreduce", CollKind::allreduce},
                                     {"Allgather", CollKind::allgather},
                                     {"Allgatherv", CollKind::allgather},
                                     {"Gather", CollKind::gather},
                                     {"Gatherv", CollKind::gather},
                                     {"Scatter", CollKind::scatter},
                                     {"Scatterv", CollKind::scatter},
                                     {"Alltoall", CollKind::alltoall},
                                     {"Alltoallv", CollKind::alltoall},
                                     {"Alltoallw", CollKind::alltoall},
                                     {"Reduce_scatter", CollKind::reduce_scatter},
                                     {"Reduce_scatter_block", CollKind::reduce_scatter},
                                     {"Scan", CollKind::scan},
                                     {"Exscan", CollKind::scan}};
  for (const auto& e : kTable)
    if (e.name == n) {
      kind = e.kind;
      return true;
    }
  return false;
}

CallClass make(const FunctionInfo& f) {
  std::string_view n = f.name;
  if (n.starts_with("MPI_")) n.remove_prefix(4);
  if (n.ends_with("_c")) n.remove_suffix(2);
  CallClass c;
  if (one_of(n, {"Send", "Rsend"}))
    c.op = Op::send;
  else if (n == "Bsend")
    c = {Op::send, false, true, {}};
  else if (n == "Ssend")
    c = {Op::send, true, false, {}};
  else if (one_of(n, {"Isend", "Irsend"}))
    c.op = Op::isend;
  else if (n == "Ibsend")
    c = {Op::isend, false, true, {}};
  else if (n == "Issend")
    c = {Op::isend, true, false, {}};
  else if (n == "Recv")
    c.op = Op::recv;
  else if (n == "Irecv")
    c.op = Op::irecv;
  else if (one_of(n, {"Sendrecv", "Sendrecv_replace"}))
    c.op = Op::sendrecv;
  else if (one_of(n, {"Wait", "Waitall", "Waitany", "Waitsome"}))
    c.op = Op::wait;
  else if (one_of(n, {"Test", "Testall", "Testany", "Testsome"}))
    c.op = Op::test;
  else if (collective_kind(n, c.coll))
    c.op = Op::coll;
  else if (n.starts_with("I") && collective_kind(n.substr(1), c.coll))
    c.op = Op::icoll;
  else if (f.category == Category::communicator &&
           !one_of(n, {"Comm_create_group", "Intercomm_create", "Intercomm_merge", "Comm_idup",
                       "Comm_idup_with_info", "Comm_spawn", "Comm_spawn_multiple", "Comm_accept",
                       "Comm_connect", "Comm_join"})) {
    bool out = false, in = false;
    for (const auto& p : f.params) {
      out = out || p.role == Role::comm_out;
      in = in || p.role == Role::comm;
    }
    if (out && in) c.op = Op::comm_create;
  }
  c.any = n.ends_with("any");
  c.some = n.ends_with("some");
  return c;
}

}  // namespace

const CallClass& classify(std::uint16_t function) {
  static const std::vector<CallClass> table = [] {
    std::vector<CallClass> t;
    for (const auto& f : function_table()) t.push_back(make(f));
    return t;
  }();
  static const CallClass local;
  return function < table.size() ? table[function] : local;
}

bool moves_data(Op op) {
  switch (op) {
    case Op::send:
    case Op::isend:
    case Op::recv:
    case Op::irecv:
    case Op::sendrecv:
    case Op::coll:
    case Op::icoll:
      return true;
    default:
      return false;
  }
}

namespace {

constexpr std::size_t kRoles = static_cast<std::size_t>(Role::ret_aint) + 1;
constexpr std::uint8_t kNone = 0xFF;

// Per function, the index of the first and second parameter of each role: the models look
// arguments up by role several times per call.
using RoleIndex = std::array<std::array<std::uint8_t, 2>, kRoles>;

const std::vector<RoleIndex>& role_index() {
  static const std::vector<RoleIndex> table = [] {
    std::vector<RoleIndex> t;
    for (const auto& f : function_table()) {
      RoleIndex ix;
      for (auto& r : ix) r = {kNone, kNone};
      for (std::size_t i = 0; i < f.params.size() && i < kNone; ++i) {
        auto& slot = ix[static_cast<std::size_t>(f.params[i].role)];
        if (slot[0] == kNone)
          slot[0] = static_cast<std::uint8_t>(i);
        else if (slot[1] == kNone)
          slot[1] = static_cast<std::uint8_t>(i);
      }
      t.push_back(ix);
    }
    return t;
  }();
  return table;
}

}  // namespace

const ArgValue* arg_of(const Event& ev, Role role, int nth) {
  const auto& index = role_index();
  if ((nth == 0 || nth == 1) && ev.function < index.size() && ev.info().params.size() < kNone) {
    const std::size_t i = index[ev.function][static_cast<std::size_t>(role)][nth];
    if (i == kNone || i >= ev.args.size()) return nullptr;
    return ev.args[i].present ? &ev.args[i] : nullptr;
  }
  const auto params = ev.info().params;
  for (std::size_t i = 0; i < params.size() && i < ev.args.size(); ++i) {
    if (params[i].role != role) continue;
    if (nth-- == 0) return ev.args[i].present ? &ev.args[i] : nullptr;
  }
  return nullptr;
}

std::int64_t scalar_of(const Event& ev, Role role, int nth, std::int64_t fallback) {
  const ArgValue* a = arg_of(ev, role, nth);
  return a ? a->scalar : fallback;
}

}  // namespace encore::predict
