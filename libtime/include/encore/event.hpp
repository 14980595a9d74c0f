// One decoded MPI call, as the tools and libreplay see it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "encore/mpi_table.hpp"

namespace encore {

struct StatusRecord {
  std::uint8_t bits = 0;  // event_format::kStatusIgnored | kStatusCancelled
  std::int64_t source = 0;
  std::int64_t tag = 0;
  std::uint64_t bytes = 0;
  std::int64_t error = 0;
};

// A reference to the event that created a request.
struct RequestRef {
  bool null = true;  // MPI_REQUEST_NULL or a request the tool did not create
  std::uint16_t thread = 0;
  std::uint64_t event = 0;
};

// The value of one parameter, by its role (see encore/event_format.hpp).
struct ArgValue {
  bool present = false;                // out-args are absent when the call failed; opaque never
  std::int64_t scalar = 0;             // ints, ids, buffer flags
  double real = 0;                     // ret_double
  std::vector<std::int64_t> list;      // arrays; members (world ranks) of a new comm or group
  std::vector<std::int64_t> remote;    // remote members of a new intercommunicator
  std::uint64_t flags = 0;             // comm_out: bit 0 intercommunicator
  std::vector<RequestRef> requests;    // request, request_inout (one), request_array
  std::vector<StatusRecord> statuses;  // status_in/out (one), status_array
  std::string text;                    // strings

  // Back to empty but for present and scalar, keeping the vectors' storage (reused Events).
  void clear_values() {
    real = 0;
    flags = 0;
    list.clear();
    remote.clear();
    requests.clear();
    statuses.clear();
    text.clear();
  }
  // Back to a default value, keeping the vectors' storage.
  void clear() {
    present = false;
    scalar = 0;
    clear_values();
  }
};

// Received bytes of this call in the payload stream.
struct PayloadRef {
  std::uint64_t slot = 0;      // request array index for Wait*/Test*, else 0
  std::uint64_t datatype = 0;  // stable datatype id
  std::uint64_t count = 0;     // elements
  std::uint64_t bytes = 0;
  std::uint64_t offset = 0;  // in the thread's payload stream
};

struct SendHash {
  std::uint64_t hash = 0;
  std::uint64_t bytes = 0;
};

struct DatatypeSignature {
  std::uint64_t datatype = 0;
  std::uint64_t size = 0;
  std::vector<std::pair<std::uint32_t, std::uint64_t>> runs;  // (element size, repeat)
};

// MPI_Dist_graph_create: the rank's neighbours in the new communicator, as
// MPI_Dist_graph_neighbors gives them (weights empty when the graph is unweighted).
struct NeighbourLists {
  bool weighted = false;
  std::vector<std::int64_t> sources, source_weights, destinations, dest_weights;
};

struct Event {
  std::uint16_t function = 0;
  std::uint16_t thread = 0;
  std::uint64_t index = 0;         // in the thread's stream, from 0
  std::uint64_t start_ns = 0;      // corrected
  std::uint64_t end_ns = 0;        // corrected
  std::uint64_t overhead_ns = 0;   // tool time charged just before this call
  std::uint64_t raw_start_ns = 0;  // uncorrected (start + all overhead so far)
  std::int64_t rc = 0;
  // One per parameter of the function, in table order. May hold more entries than the
  // function has parameters (the decoder reuses them): only the first params.size() count.
  std::vector<ArgValue> args;
  std::vector<PayloadRef> payloads;
  std::vector<SendHash> send_hashes;
  // Since format 1.4: a collective's own input, one hash per non-empty block (the send buffer,
  // or with MPI_IN_PLACE the part of the receive buffer that was the input). Not bytes sent to
  // a peer: models and stats that count sends read send_hashes only.
  std::vector<SendHash> contribution_hashes;
  std::vector<DatatypeSignature> signatures;
  std::optional<std::uint64_t> callsite;
  std::vector<std::uint64_t> counters;
  std::uint64_t stall_ns = 0;
  // Since format 1.1: the int a predefined attribute key's value points to
  // (MPI_Comm_get_attr, MPI_Attr_get), and MPI_Dist_graph_create's neighbours.
  std::optional<std::int64_t> attribute;
  std::optional<NeighbourLists> neighbours;
  // Since format 1.3: the part of the duration that was the first read of the received bytes
  // (0: none measured). Summed over the call's payloads.
  std::uint64_t first_read_ns = 0;
  // Decoder bookkeeping: bit i set when args[i] may hold more than present and scalar (lists,
  // requests, statuses, text, real, flags), bit 63 when payloads, send hashes, call site or
  // stall may be set, bit 62 when the other extras may be; in the other two, bit i when
  // args[i] may hold requests (statuses) and nothing else. The decoder clears only those, so
  // reusing an Event costs little; all of `stale` set in a new Event.
  std::uint64_t stale = ~std::uint64_t{0};
  std::uint64_t stale_requests = 0;
  std::uint64_t stale_statuses = 0;

  const FunctionInfo& info() const { return function_table()[function]; }
  std::uint64_t payload_bytes() const {
    std::uint64_t n = 0;
    for (const auto& p : payloads) n += p.bytes;
    return n;
  }
};

}  // namespace encore
