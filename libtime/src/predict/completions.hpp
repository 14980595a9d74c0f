// The requests a recorded Wait* or Test* completed, each with its status when the call recorded
// one. Internal to libtime's predict code (the fit's pairs; the engine keeps its own inlined
// walk for speed).
#pragma once

#include <cstddef>
#include <cstdint>

#include "call_class.hpp"
#include <mpi.h>

#include "encore/event.hpp"

namespace encore::predict {

// Whether a Test* call completed anything: Test(flag), Testall(flag), Testany(index, flag),
// Testsome(outcount, indices). Wait* always does.
inline bool completes(const CallClass& cls, const Event& ev) {
  if (cls.op != Op::test) return cls.op == Op::wait;
  const std::int64_t flag =
      cls.some ? scalar_of(ev, Role::int_out, 0) : scalar_of(ev, Role::int_out, cls.any ? 1 : 0);
  return flag != 0 && !(cls.any && scalar_of(ev, Role::int_out, 0) == MPI_UNDEFINED);
}

// Calls f(const RequestRef&, const StatusRecord* or nullptr) for each request `ev` completed
// (null requests skipped). `ev` must complete something (completes()).
template <class F>
void for_each_completed(const CallClass& cls, const Event& ev, F&& f) {
  const auto status = [](const ArgValue* a, std::size_t k) -> const StatusRecord* {
    return a && k < a->statuses.size() ? &a->statuses[k] : nullptr;
  };
  if (const ArgValue* one = arg_of(ev, Role::request_inout); one && !one->requests.empty()) {
    if (!one->requests[0].null) f(one->requests[0], status(arg_of(ev, Role::status_out), 0));
    return;
  }
  const ArgValue* arr = arg_of(ev, Role::request_array);
  if (!arr) return;
  const auto nth = [&](std::int64_t i) -> const RequestRef* {
    if (i < 0 || static_cast<std::size_t>(i) >= arr->requests.size()) return nullptr;
    const RequestRef& r = arr->requests[static_cast<std::size_t>(i)];
    return r.null ? nullptr : &r;
  };
  if (cls.any) {
    if (const RequestRef* r = nth(scalar_of(ev, Role::int_out, 0, -1)))
      f(*r, status(arg_of(ev, Role::status_out), 0));
    return;
  }
  const ArgValue* st = arg_of(ev, Role::status_array);
  if (cls.some) {
    const ArgValue* idx = arg_of(ev, Role::int_array_out);
    if (!idx) return;
    for (std::size_t k = 0; k < idx->list.size(); ++k)
      if (const RequestRef* r = nth(idx->list[k])) f(*r, status(st, k));
    return;
  }
  for (std::size_t k = 0; k < arr->requests.size(); ++k)
    if (const RequestRef* r = nth(static_cast<std::int64_t>(k))) f(*r, status(st, k));
}

}  // namespace encore::predict
