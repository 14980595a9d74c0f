// What a rank's earlier calls established, as later calls need it: the size of each datatype
// (predefined and derived) and each communicator's members. Fed every event of one rank in
// stream order; answers in O(1). Memory grows with the handles alive, not with trace length.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "encore/event.hpp"

namespace encore {

struct CommInfo {
  std::vector<std::int64_t> members;  // world ranks, in communicator rank order
  std::vector<std::int64_t> remote;   // remote group of an intercommunicator
  bool inter = false;
  std::int64_t rank = -1;  // this rank's position in members (-1 if absent)
  std::int64_t size() const noexcept { return static_cast<std::int64_t>(members.size()); }
};

class RankContext {
 public:
  // world_rank and world_size of the rank whose events are fed.
  RankContext(std::uint32_t world_rank, std::uint32_t world_size);

  // Learns from constructors and destructors (types, communicators, groups).
  void observe(const Event& e);

  // Bytes of one element of a datatype id; nullopt if unknown (e.g. created by a call this
  // tracker does not model).
  std::optional<std::uint64_t> type_size(std::uint64_t datatype_id) const;
  const CommInfo* comm(std::uint64_t comm_id) const;
  const CommInfo* group(std::uint64_t group_id) const;  // members only
  std::uint32_t world_rank() const noexcept { return world_rank_; }
  std::uint32_t world_size() const noexcept { return world_size_; }

 private:
  void observe_type(const Event& e, std::string_view name);
  std::uint32_t world_rank_;
  std::uint32_t world_size_;
  std::unordered_map<std::uint64_t, std::uint64_t> type_sizes_;  // derived types by id
  std::unordered_map<std::uint64_t, CommInfo> comms_;
  std::unordered_map<std::uint64_t, CommInfo> groups_;
};

// The argument of `e` named `name` (as mpi.h names the parameter), or nullptr.
const ArgValue* find_arg(const Event& e, std::string_view name);

// Bytes this rank's call moves through the user's buffers: `sent` from its send buffer(s),
// `received` into its receive buffer(s). Received bytes come from the recorded payloads
// (exact) when the trace holds them, sent bytes from the recorded send hashes (exact) when it
// holds them; otherwise both are computed from counts, datatypes and the communicator size
// (receives of unknown length use the status). known is false when a size could not be
// determined (an unknown datatype, a neighbourhood collective).
struct MessageBytes {
  std::uint64_t sent = 0;
  std::uint64_t received = 0;
  bool known = true;
};
MessageBytes message_bytes(const RankContext& ctx, const Event& e);

}  // namespace encore
