#include "call_kinds.hpp"

#include <array>
#include <string>

#include <mpi.h>

namespace encore::exporter {
namespace {

CallClass class_of(std::string_view name) {
  CallClass c;
  if (name.substr(0, 4) == "MPI_") name.remove_prefix(4);
  if (name.size() > 2 && name.substr(name.size() - 2) == "_c") name.remove_suffix(2);
  c.base = name;
  auto any = [&](std::initializer_list<std::string_view> names) {
    for (auto n : names)
      if (n == name) return true;
    return false;
  };
  if (any({"Send", "Bsend", "Ssend", "Rsend"}))
    c.kind = CallKind::send;
  else if (name == "Recv")
    c.kind = CallKind::recv;
  else if (any({"Sendrecv", "Sendrecv_replace"}))
    c.kind = CallKind::sendrecv;
  else if (any({"Isend", "Ibsend", "Issend", "Irsend"}))
    c.kind = CallKind::isend;
  else if (name == "Irecv")
    c.kind = CallKind::irecv;
  else if (name == "Mrecv")
    c.kind = CallKind::mrecv;
  else if (name == "Imrecv")
    c.kind = CallKind::imrecv;
  else if (any({"Send_init", "Bsend_init", "Ssend_init", "Rsend_init"}))
    c.kind = CallKind::send_init;
  else if (name == "Recv_init")
    c.kind = CallKind::recv_init;
  else if (any({"Start", "Startall"}))
    c.kind = CallKind::start;
  else if (any({"Wait", "Waitall", "Waitany", "Waitsome", "Test", "Testall", "Testany",
                "Testsome"}))
    c.kind = CallKind::completion;
  else if (any({"Barrier", "Bcast", "Gather", "Gatherv", "Scatter", "Scatterv", "Allgather",
                "Allgatherv", "Alltoall", "Alltoallv", "Alltoallw", "Allreduce", "Reduce",
                "Reduce_scatter", "Reduce_scatter_block", "Scan", "Exscan"}))
    c.kind = CallKind::collective;
  return c;
}

std::int64_t predefined_comm(std::string_view name) {
  const auto handles = predefined_handles(HandleKind::comm);
  for (std::size_t i = 0; i < handles.size(); ++i)
    if (handles[i].name == name) return static_cast<std::int64_t>(2 + i);
  return -1;
}

}  // namespace

const CallClass& classify(std::uint16_t function) {
  static const std::vector<CallClass> table = [] {
    std::vector<CallClass> t;
    for (const auto& f : function_table()) t.push_back(class_of(f.name));
    return t;
  }();
  static const CallClass none;
  return function < table.size() ? table[function] : none;
}

const ArgValue* role_arg(const Event& ev, Role role, int nth) {
  const auto params = ev.info().params;
  for (std::size_t i = 0; i < params.size() && i < ev.args.size(); ++i) {
    if (params[i].role != role) continue;
    if (nth-- > 0) continue;
    return ev.args[i].present ? &ev.args[i] : nullptr;
  }
  return nullptr;
}

std::int64_t role_scalar(const Event& ev, Role role, int nth, std::int64_t fallback) {
  const ArgValue* a = role_arg(ev, role, nth);
  return a ? a->scalar : fallback;
}

std::int64_t world_comm_id() {
  static const std::int64_t id = predefined_comm("MPI_COMM_WORLD");
  return id;
}
std::int64_t self_comm_id() {
  static const std::int64_t id = predefined_comm("MPI_COMM_SELF");
  return id;
}

void completed_requests(const Event& ev, std::vector<Completed>& out) {
  out.clear();
  const std::string_view name = classify(ev.function).base;
  const bool test = name.substr(0, 4) == "Test";
  const std::string_view how = name.substr(4);  // "", "all", "any", "some"
  if (how.empty()) {                            // Wait, Test: one request
    if (test && role_scalar(ev, Role::int_out, 0, 0) == 0) return;
    const ArgValue* req = role_arg(ev, Role::request_inout);
    const ArgValue* st = role_arg(ev, Role::status_out);
    if (!req || req->requests.empty() || req->requests[0].null) return;
    out.push_back({req->requests[0], st && !st->statuses.empty() ? &st->statuses[0] : nullptr});
    return;
  }
  const ArgValue* reqs = role_arg(ev, Role::request_array);
  if (!reqs) return;
  if (how == "all") {
    if (test && role_scalar(ev, Role::int_out, 0, 0) == 0) return;
    const ArgValue* st = role_arg(ev, Role::status_array);
    for (std::size_t i = 0; i < reqs->requests.size(); ++i) {
      if (reqs->requests[i].null) continue;
      const bool has = st && i < st->statuses.size();
      out.push_back({reqs->requests[i], has ? &st->statuses[i] : nullptr});
    }
  } else if (how == "any") {
    const std::int64_t index = role_scalar(ev, Role::int_out, 0, MPI_UNDEFINED);
    if (test && role_scalar(ev, Role::int_out, 1, 0) == 0) return;
    if (index < 0 || static_cast<std::size_t>(index) >= reqs->requests.size()) return;
    const ArgValue* st = role_arg(ev, Role::status_out);
    const auto& r = reqs->requests[static_cast<std::size_t>(index)];
    if (!r.null) out.push_back({r, st && !st->statuses.empty() ? &st->statuses[0] : nullptr});
  } else if (how == "some") {
    const ArgValue* idx = role_arg(ev, Role::int_array_out);
    const ArgValue* st = role_arg(ev, Role::status_array);
    if (!idx) return;
    for (std::size_t k = 0; k < idx->list.size(); ++k) {
      const std::int64_t i = idx->list[k];
      if (i < 0 || static_cast<std::size_t>(i) >= reqs->requests.size()) continue;
      const auto& r = reqs->requests[static_cast<std::size_t>(i)];
      if (!r.null) out.push_back({r, st && k < st->statuses.size() ? &st->statuses[k] : nullptr});
    }
  }
}

}  // namespace encore::exporter
