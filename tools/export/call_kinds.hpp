// What the otf2 and dumpi exporters need to know about an MPI call beyond its parameter roles:
// which calls move messages, start or complete requests, or are collectives, and the values
// they carry (peer, tag, communicator, completed requests with their statuses).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "encore/event.hpp"

namespace encore::exporter {

enum class CallKind : std::uint8_t {
  other,
  send,        // Send, Bsend, Ssend, Rsend
  recv,        // Recv
  sendrecv,    // Sendrecv, Sendrecv_replace
  isend,       // Isend, Ibsend, Issend, Irsend
  irecv,       // Irecv
  mrecv,       // Mrecv: the message an Mprobe/Improbe matched
  imrecv,      // Imrecv
  send_init,   // Send_init, Bsend_init, Ssend_init, Rsend_init
  recv_init,   // Recv_init
  start,       // Start, Startall
  completion,  // Wait*, Test*
  collective,  // blocking collectives on a communicator
};

struct CallClass {
  CallKind kind = CallKind::other;
  std::string_view base;  // the name without "MPI_" and a "_c" suffix, e.g. "Allreduce"
};

// The class of function id `function` (computed once for the whole table).
const CallClass& classify(std::uint16_t function);

// The n-th parameter (from 0) of `ev` with role `role`, or nullptr if there is none or it
// was not recorded (outputs of a failed call).
const ArgValue* role_arg(const Event& ev, Role role, int nth = 0);
std::int64_t role_scalar(const Event& ev, Role role, int nth, std::int64_t fallback);

// The id of MPI_COMM_WORLD and MPI_COMM_SELF in traces (2 + their predefined index).
std::int64_t world_comm_id();
std::int64_t self_comm_id();

// A request a completion call finished, with the status MPI gave for it (nullptr if none).
struct Completed {
  RequestRef request;
  const StatusRecord* status = nullptr;
};
// The requests `ev` (a Wait*/Test*) completed, in the order of its request array.
void completed_requests(const Event& ev, std::vector<Completed>& out);

// A request's key for maps: its creating thread and event.
inline std::uint64_t request_key(const RequestRef& r) {
  return (static_cast<std::uint64_t>(r.thread) << 48) | (r.event & ((1ull << 48) - 1));
}

}  // namespace encore::exporter
