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

// "Iallreduce" -> "Allreduce": the blocking collective a nonblocking one starts.
std::string blocking_name(std::string_view n) {
  std::string b(n.substr(1));
  if (b[0] >= 'a' && b[0] <= 'z') b[0] = static_cast<char>(b[0] - 'a' + 'A');
  return b;
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
  else if (one_of(n, {"Probe", "Iprobe"}))
    c.op = Op::probe;
  else if (one_of(n, {"Sendrecv", "Sendrecv_replace"}))
    c.op = Op::sendrecv;
  else if (one_of(n, {"Isendrecv", "Isendrecv_replace"}))
    c.op = Op::isendrecv;
  else if (one_of(n, {"Mprobe", "Improbe"}))
    c.op = Op::mprobe;
  else if (one_of(n, {"Send_init", "Rsend_init"}))
    c.op = Op::psend_init;
  else if (n == "Bsend_init")
    c = {Op::psend_init, false, true, {}};
  else if (n == "Ssend_init")
    c = {Op::psend_init, true, false, {}};
  else if (n == "Recv_init")
    c.op = Op::precv_init;
  else if (one_of(n, {"Start", "Startall"}))
    c.op = Op::start;
  else if (n == "Request_free")
    c.op = Op::free_request;
  else if (one_of(n, {"Wait", "Waitall", "Waitany", "Waitsome"}))
    c.op = Op::wait;
  else if (one_of(n, {"Test", "Testall", "Testany", "Testsome"}))
    c.op = Op::test;
  else if (collective_kind(n, c.coll))
    c.op = Op::coll;
  else if (n.size() > 1 && n[0] == 'I' && collective_kind(blocking_name(n), c.coll))
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
  c.moves = moves_data(c.op);
  c.shapes = shapes_context(f.category);
  c.needs_comm = c.op != Op::wait && c.op != Op::test && c.op != Op::local && c.op != Op::start &&
                 c.op != Op::free_request;
  c.sized = c.moves && c.op != Op::recv && c.op != Op::irecv;
  bool comm_roles = false;  // CommTable::observe acts on nothing else
  for (const auto& p : f.params)
    comm_roles |= p.role == Role::comm_out || p.role == Role::comm_free;
  c.observes_comms = comm_roles && (c.op == Op::comm_create || c.op == Op::local);
  c.modelled_p2p = f.modelled && f.category == Category::p2p;
  return c;
}

}  // namespace

namespace detail {

const std::vector<CallClass> call_classes = [] {
  std::vector<CallClass> t;
  for (const auto& f : function_table()) t.push_back(make(f));
  t.push_back(CallClass{});
  return t;
}();

}  // namespace detail

bool moves_data(Op op) {
  switch (op) {
    case Op::send:
    case Op::isend:
    case Op::recv:
    case Op::irecv:
    case Op::sendrecv:
    case Op::isendrecv:
    case Op::psend_init:
    case Op::coll:
    case Op::icoll:
      return true;
    default:
      return false;
  }
}

namespace detail {

const std::vector<RoleIndex> role_index = [] {
  std::vector<RoleIndex> t;
  for (const auto& f : function_table()) {
    RoleIndex ix;
    for (auto& r : ix.at) r = {kNoArg, kNoArg};
    ix.complete = f.params.size() < kNoArg;
    for (std::size_t i = 0; ix.complete && i < f.params.size(); ++i) {
      auto& slot = ix.at[static_cast<std::size_t>(f.params[i].role)];
      if (slot[0] == kNoArg)
        slot[0] = static_cast<std::uint8_t>(i);
      else if (slot[1] == kNoArg)
        slot[1] = static_cast<std::uint8_t>(i);
    }
    t.push_back(ix);
  }
  return t;
}();

const ArgValue* search_arg(const Event& ev, Role role, int nth) {
  const auto params = ev.info().params;
  for (std::size_t i = 0; i < params.size() && i < ev.args.size(); ++i) {
    if (params[i].role != role) continue;
    if (nth-- == 0) return ev.args[i].present ? &ev.args[i] : nullptr;
  }
  return nullptr;
}

}  // namespace detail

}  // namespace encore::predict
