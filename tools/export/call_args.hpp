// Arguments of a decoded call looked up by MPI parameter name, when recorded ("dest",
// "recvcounts"...), as mpi.h names them: the exporters read calls by meaning, not by position.
#pragma once

#include <cstdint>
#include <string_view>

#include "encore/event.hpp"

namespace encore::exporter {

// The argument named `name`, or nullptr if the function has no such parameter or it was
// not recorded (outputs of a failed call, root-only arguments elsewhere).
const ArgValue* recorded_arg(const Event& e, std::string_view name);

inline std::int64_t scalar_arg(const Event& e, std::string_view name, std::int64_t fallback) {
  const ArgValue* a = recorded_arg(e, name);
  return a ? a->scalar : fallback;
}

// MPI's sentinels as the trace keeps them (MPICH's values, see trace-format.md).
inline constexpr std::int64_t kProcNull = -1;
inline constexpr std::int64_t kAnySource = -2;
inline constexpr std::int64_t kAnyTag = -1;

// A request's creating event as one number, and the same for an event (to look one up).
inline std::uint64_t request_key(const RequestRef& r) {
  return (static_cast<std::uint64_t>(r.thread) << 48) ^ r.event;
}
inline std::uint64_t event_key(const Event& e) {
  return (static_cast<std::uint64_t>(e.thread) << 48) ^ e.index;
}

// Calls `f(request_ref, status_or_null)` for each request a Wait*/Test* call completed.
template <typename F>
void for_each_completed(const Event& e, F&& f) {
  const ArgValue* reqs = recorded_arg(e, "array_of_requests");
  if (!reqs) reqs = recorded_arg(e, "request");
  if (!reqs) return;
  const ArgValue* status = recorded_arg(e, "status");
  const ArgValue* statuses = recorded_arg(e, "array_of_statuses");
  auto status_at = [&](std::size_t k, std::size_t i) -> const StatusRecord* {
    if (statuses && k < statuses->statuses.size()) return &statuses->statuses[k];
    if (status && !status->statuses.empty() && i == 0) return &status->statuses[0];
    return nullptr;
  };
  switch (e.function) {
    case fn::Wait:
    case fn::Waitall:
      for (std::size_t i = 0; i < reqs->requests.size(); ++i) f(reqs->requests[i], status_at(i, i));
      break;
    case fn::Test:
    case fn::Testall:
      if (scalar_arg(e, "flag", 0) != 0)
        for (std::size_t i = 0; i < reqs->requests.size(); ++i)
          f(reqs->requests[i], status_at(i, i));
      break;
    case fn::Waitany:
    case fn::Testany: {
      const std::int64_t i = scalar_arg(e, "indx", -1);
      if ((e.function == fn::Waitany || scalar_arg(e, "flag", 0) != 0) && i >= 0 &&
          static_cast<std::size_t>(i) < reqs->requests.size())
        f(reqs->requests[static_cast<std::size_t>(i)], status_at(0, 0));
      break;
    }
    case fn::Waitsome:
    case fn::Testsome: {
      const ArgValue* idx = recorded_arg(e, "array_of_indices");
      if (!idx) break;
      for (std::size_t k = 0; k < idx->list.size(); ++k) {
        const std::int64_t i = idx->list[k];
        if (i >= 0 && static_cast<std::size_t>(i) < reqs->requests.size())
          f(reqs->requests[static_cast<std::size_t>(i)], status_at(k, 1));
      }
      break;
    }
    default:
      break;
  }
}

}  // namespace encore::exporter
