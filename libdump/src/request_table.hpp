// Outstanding requests, by handle. A request is named in the trace by the event that created
// it. MPICH hands out one shared, already-completed handle for operations that finish at once
// (a send or receive with MPI_PROC_NULL...), so one handle value may stand for several live
// requests: the k-th appearance of a value in a call's request list is taken to be the k-th
// oldest request still outstanding with that value.
//
// Every completion call looks its requests up, so the table is built for that: an
// open-addressed index from handle value to the oldest request with it (one multiply, one
// compare), the requests of one value linked oldest first, in nodes whose addresses stay put
// until they are retired (a call resolves its array once and keeps the pointers), recycled
// through a free list (no allocation per request once the program's peak is reached).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <span>
#include <vector>

#include "recv_layout.hpp"
#include <mpi.h>

#include "encore/collective_contribution.hpp"

namespace encore::dump {

enum class RequestKind : std::uint8_t { send, recv, collective, other };

struct RequestInfo {
  std::uint16_t thread = 0;
  std::uint64_t event = 0;  // index of the creating event in its thread's stream
  RequestKind kind = RequestKind::other;
  bool persistent = false;
  RecvBlock recv{};  // recv: the posted buffer (inline: no allocation per receive)
  // recv: recorded whole at completion, whatever the status says (MPICH 4.0 leaves an
  // MPI_Isendrecv(_replace) request's status as the memory held it).
  bool status_unset = false;
  // Its received data is in the trace already (an MPI_Request_get_status that said it was
  // done): the completion records none again. Until the next MPI_Start, if persistent.
  bool captured = false;
  RecvLayout layout;               // collective: its receive blocks
  const void* send_buf = nullptr;  // persistent sends: hashed at every MPI_Start
  MPI_Count send_count = 0;
  MPI_Datatype send_type = MPI_DATATYPE_NULL;
  contribution::Blocks contribution;  // persistent collectives: hashed at every MPI_Start
};

// A request as a call names it: handle value and which appearance of that value.
struct RequestSlot {
  MPI_Request handle;
  std::size_t occurrence;
};

class RequestTable {
 public:
  // A new request with this handle (the newest of its value).
  RequestInfo& add(MPI_Request r);
  // The request the current call just created with this handle.
  RequestInfo* newest(MPI_Request r);
  RequestInfo* find(RequestSlot slot);
  // Every element of a request array resolved at once (`out[i]` for `r[i]`, null for
  // MPI_REQUEST_NULL or a value with no request left): the k-th appearance of a value takes the
  // k-th oldest request with it, in one pass over the array (no pairwise compare).
  void resolve(const MPI_Request* r, std::size_t n, RequestInfo** out);
  // Forgets a request add(), find() or resolve() gave; the other requests' pointers stay valid.
  // Retiring one twice does nothing the second time.
  void retire(RequestInfo* info) noexcept;
  // Forgets completed or freed requests named by slots (all of one call at once: occurrences
  // refer to the table before the call).
  void retire(std::span<const RequestSlot> done);

 private:
  struct Entry;
  struct Node : RequestInfo {
    bool live = false;
    std::uint64_t claimed = 0;  // the resolve() that took it (never wraps)
    Node* next = nullptr;  // the next younger request with the same handle; free: the next free
    Node* prev = nullptr;
    Entry* home = nullptr;  // its handle's entry (grow() moves it)
  };
  struct Entry {
    MPI_Request handle;
    bool used;
    Node* oldest;
    Node* newest;
  };
  // The entry of a handle value, or of the free place where it would go.
  Entry& entry(MPI_Request r) noexcept;
  void grow();

  // Entries stay once used (MPICH hands the same few handle values out again), so probing
  // never meets a removed one; the index is kept at most half full.
  std::vector<Entry> index_ = std::vector<Entry>(64);
  std::size_t used_ = 0;
  unsigned shift_ = 32 - 6;
  std::deque<Node> nodes_;  // stable addresses
  Node* free_ = nullptr;    // retired nodes, linked through next
  std::uint64_t stamp_ = 0;
};

}  // namespace encore::dump
