// Sends and receives that MPI_Cancel undid: the Wait or Test that completed them says
// "cancelled" in its status, and they moved no message. An exporter that writes a message
// where it is posted (a SimGrid isend or irecv, a Chrome flow's start) learns it only at the
// completion, so a first pass over the rank collects them; it holds only the cancelled ones
// (and the latest start of each persistent request).
#pragma once

#include <cstdint>
#include <set>
#include <unordered_map>
#include <utility>

#include "encore/event.hpp"
#include "encore/event_format.hpp"

namespace encore::exporter {

// Whether a completed request's status says it was cancelled.
inline bool was_cancelled(const StatusRecord* status) {
  return status && (status->bits & event_format::kStatusCancelled) != 0;
}

class CancelledRequests {
 public:
  // The first pass: call for every event of a rank, in stream order.
  void observe(const Event& e);
  // Whether request `r`, posted by `posting` (its Isend/Irecv... or, for a persistent
  // request, the MPI_Start or MPI_Startall of this activation), ended cancelled.
  bool contains(const Event& posting, const RequestRef& r) const;
  bool empty() const noexcept { return cancelled_.empty(); }

 private:
  std::unordered_map<std::uint64_t, std::uint64_t> started_;     // persistent: its latest start
  std::set<std::pair<std::uint64_t, std::uint64_t>> cancelled_;  // (posting, request)
};

}  // namespace encore::exporter
