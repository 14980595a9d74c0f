// What the exporters ask of a rank's earlier calls, on top of encore::RankContext: element
// sizes (0 when unknown) and communicator ranks as world ranks.
#pragma once

#include <cstdint>
#include <unordered_map>

#include "encore/event.hpp"
#include "encore/rank_context.hpp"

namespace encore::exporter {

class MessageSizes {
 public:
  MessageSizes(std::uint32_t my_rank, std::uint32_t nprocs) : ctx_(my_rank, nprocs) {}
  void observe(const Event& e) { ctx_.observe(e); }
  // Bytes of one element of `datatype` (a stable id); 0 if unknown.
  std::uint64_t type_size(std::uint64_t datatype) const {
    return ctx_.type_size(datatype).value_or(0);
  }
  // Whether `comm` is an intracommunicator holding every world rank in world order.
  bool is_world(std::uint64_t comm);
  // The world rank of peer `rank` of `comm` (in the remote group of an intercommunicator);
  // -1 if unknown.
  std::int64_t world_rank(std::uint64_t comm, std::int64_t rank) const;
  // The same number on every member for the same communicator (a hash of its members and
  // remote members); 0 if unknown. Communicators with equal members share it.
  std::uint64_t comm_key(std::uint64_t comm) const;
  const RankContext& context() const noexcept { return ctx_; }

 private:
  RankContext ctx_;
  std::unordered_map<std::uint64_t, bool> is_world_;
};

}  // namespace encore::exporter
