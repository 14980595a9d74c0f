// Outstanding requests, by handle. A request is named in the trace by the event that created
// it. MPICH hands out one shared, already-completed handle for operations that finish at once
// (a send or receive with MPI_PROC_NULL...), so one handle value may stand for several live
// requests: the k-th appearance of a value in a call's request list is taken to be the k-th
// oldest request still outstanding with that value.
#pragma once

#include <cstddef>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "recv_layout.hpp"
#include <mpi.h>

namespace encore::dump {

enum class RequestKind : std::uint8_t { send, recv, collective, other };

struct RequestInfo {
  std::uint16_t thread = 0;
  std::uint64_t event = 0;  // index of the creating event in its thread's stream
  RequestKind kind = RequestKind::other;
  bool persistent = false;
  RecvBlock recv{};                // recv: the posted buffer (inline: no allocation per receive)
  RecvLayout layout;               // collective: its receive blocks
  const void* send_buf = nullptr;  // persistent sends: hashed at every MPI_Start
  MPI_Count send_count = 0;
  MPI_Datatype send_type = MPI_DATATYPE_NULL;
};

// A request as a call names it: handle value and which appearance of that value.
struct RequestSlot {
  MPI_Request handle;
  std::size_t occurrence;
};

class RequestTable {
 public:
  RequestInfo& add(MPI_Request r);
  // The request the current call just created with this handle.
  RequestInfo* newest(MPI_Request r);
  RequestInfo* find(RequestSlot slot);
  // Forgets completed or freed requests (all of one call at once, so occurrences stay valid;
  // `done` is reordered).
  void retire(std::span<RequestSlot> done);

 private:
  std::unordered_map<MPI_Request, std::vector<RequestInfo>> live_;
};

// The slot of every element of a request array (how many times its value appeared before).
void request_slots(const MPI_Request* r, std::int64_t n, std::vector<RequestSlot>& out);

}  // namespace encore::dump
