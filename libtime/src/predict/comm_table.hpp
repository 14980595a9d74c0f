// Communicators as the models need them: the same communicator has different stable ids on
// different ranks, so it is named across ranks by its members (world ranks) and how many
// communicators with those members the rank had created before it (creation is collective,
// so every member counts alike).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "encore/event.hpp"

namespace encore::predict {

struct CommInfo {
  std::uint32_t key = 0;                                     // the same on every member
  std::shared_ptr<const std::vector<std::int64_t>> members;  // world ranks by comm rank
  std::size_t index = 0;                                     // this rank's rank in it
  // World rank of communicator rank `peer`, or nullopt (MPI_PROC_NULL, out of range).
  std::optional<std::uint32_t> world(std::int64_t peer) const {
    if (peer < 0 || static_cast<std::size_t>(peer) >= members->size()) return std::nullopt;
    const std::int64_t w = (*members)[static_cast<std::size_t>(peer)];
    if (w < 0) return std::nullopt;
    return static_cast<std::uint32_t>(w);
  }
};

class CommRegistry {
 public:
  explicit CommRegistry(std::uint32_t nprocs);
  std::uint32_t intern(const std::vector<std::int64_t>& members, std::uint32_t occurrence);
  std::uint32_t nprocs() const noexcept { return nprocs_; }

 private:
  std::uint32_t nprocs_;
  std::map<std::pair<std::vector<std::int64_t>, std::uint32_t>, std::uint32_t> keys_;
};

class CommTable {
 public:
  CommTable() = default;
  CommTable(std::uint32_t rank, CommRegistry& registry);
  const CommInfo* find(std::uint64_t id) const {
    return last_ != nullptr && id == last_id_ ? last_ : find_slow(id);
  }
  const CommInfo* by_key(std::uint32_t key) const;
  // Registers the communicators `ev` created (comm_out) and forgets freed ones.
  void observe(const Event& ev);

 private:
  void add(std::uint64_t id, std::vector<std::int64_t> members);
  const CommInfo* find_slow(std::uint64_t id) const;

  std::uint32_t rank_ = 0;
  CommRegistry* registry_ = nullptr;
  std::unordered_map<std::uint64_t, CommInfo> by_id_;
  // The last find(): most calls use the communicator of the call before (map nodes do not
  // move; add and free reset it).
  mutable std::uint64_t last_id_ = 0;
  mutable const CommInfo* last_ = nullptr;
  std::unordered_map<std::uint32_t, std::uint64_t> id_of_key_;
  std::map<std::vector<std::int64_t>, std::uint32_t> seen_;
};

}  // namespace encore::predict
