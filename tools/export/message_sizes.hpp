// Datatype sizes and communicator members the exporters need to turn counts into bytes and
// communicator ranks into world ranks.
// TODO(rank_context): an interim stand-in for encore/rank_context.hpp (predefined types and
// MPI_COMM_WORLD/MPI_COMM_SELF only); replace it when RankContext lands on main.
#pragma once

#include <cstdint>

#include "encore/event.hpp"

namespace encore::exporter {

class MessageSizes {
 public:
  explicit MessageSizes(std::uint32_t my_rank);
  void observe(const Event&) {}
  // Bytes of one element of `datatype` (a stable id); 0 if unknown.
  std::uint64_t type_size(std::uint64_t datatype) const;
  // Whether `comm` holds every world rank in world order.
  bool is_world(std::uint64_t comm) const;
  // The world rank of `rank` in `comm`; -1 if unknown.
  std::int64_t world_rank(std::uint64_t comm, std::int64_t rank) const;

 private:
  std::uint64_t world_;
  std::uint64_t self_;
  std::int64_t my_rank_;
};

}  // namespace encore::exporter
