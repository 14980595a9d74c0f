// Stable ids for MPI handles. MPICH reuses a handle value once it is freed, so a trace cannot
// name objects by value: every object gets an id when it is created that is never reused in
// the rank (see encore::event_format for the id ranges). Predefined handles get the ids of
// their place in the generated table, so every trace of this library names them the same.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>

#include "encore/event_format.hpp"
#include "encore/mpi_table.hpp"

namespace encore::dump {

class HandleIds {
 public:
  explicit HandleIds(HandleKind kind);

  // The id of a live handle; kUnknownId if the tool never saw it created.
  // Programs pass the same communicator or datatype call after call: the last handle found is
  // checked first (one compare), then the direct-mapped cache, then the maps.
  std::uint32_t lookup(std::int64_t handle) const noexcept {
    if (handle == last_.handle) [[likely]]
      return last_.id;
    const Entry& e = cache_[slot(handle)];
    if (e.handle == handle && e.id) {
      last_ = e;
      return e.id;
    }
    return lookup_slow(handle);
  }
  // Gives a newly created handle a fresh id (or its predefined / null id).
  std::uint32_t create(std::int64_t handle);
  // The id of a handle being freed; its value may now be reused for another object.
  std::uint32_t release(std::int64_t handle);

  // A direct-mapped cache: one load and one compare per lookup. MPICH's handles keep their
  // index in the low bits (and the size of a predefined datatype in bits 8-15); a pointer
  // handle's low bits are alignment, hence the mixing.
  static constexpr std::size_t kCacheSlots = 64;
  static std::size_t slot(std::int64_t handle) noexcept {
    const auto h = static_cast<std::uint64_t>(handle);
    return (h ^ (h >> 4) ^ (h >> 8)) & (kCacheSlots - 1);
  }

 private:
  struct Entry {
    std::int64_t handle = 0;
    std::uint32_t id = 0;
  };
  std::uint32_t lookup_slow(std::int64_t handle) const noexcept;
  // Forgets `handle` in both caches: it was freed, or its value now names a new object.
  void forget(std::int64_t handle) noexcept;

  // No handle has this value: MPI's integer handles are 32-bit, and it is no user pointer.
  static constexpr std::int64_t kNoHandle = INT64_MIN;

  std::unordered_map<std::int64_t, std::uint32_t> fixed_;  // null and predefined handles
  std::unordered_map<std::int64_t, std::uint32_t> live_;
  mutable Entry cache_[kCacheSlots];  // id 0: empty
  mutable Entry last_{kNoHandle, 0};  // the last handle the cache found (never the null one)
  std::uint32_t next_id_ = event_format::kFirstDynamicId;
};

}  // namespace encore::dump
