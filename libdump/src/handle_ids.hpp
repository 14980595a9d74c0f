// Stable ids for MPI handles. MPICH reuses a handle value once it is freed, so a trace cannot
// name objects by value: every object gets an id when it is created that is never reused in
// the rank (see encore::event_format for the id ranges). Predefined handles get the ids of
// their place in the generated table, so every trace of this library names them the same.
#pragma once

#include <cstdint>
#include <unordered_map>

#include "encore/event_format.hpp"
#include "encore/mpi_table.hpp"

namespace encore::dump {

class HandleIds {
 public:
  explicit HandleIds(HandleKind kind);

  // The id of a live handle; kUnknownId if the tool never saw it created.
  std::uint32_t lookup(std::int64_t handle) const noexcept {
    for (const auto& e : recent_)
      if (e.handle == handle && e.id) return e.id;
    return lookup_slow(handle);
  }
  // Gives a newly created handle a fresh id (or its predefined / null id).
  std::uint32_t create(std::int64_t handle);
  // The id of a handle being freed; its value may now be reused for another object.
  std::uint32_t release(std::int64_t handle);

 private:
  struct Entry {
    std::int64_t handle = 0;
    std::uint32_t id = 0;
  };
  std::uint32_t lookup_slow(std::int64_t handle) const noexcept;

  std::unordered_map<std::int64_t, std::uint32_t> fixed_;  // null and predefined handles
  std::unordered_map<std::int64_t, std::uint32_t> live_;
  mutable Entry recent_[4];  // a tiny cache: programs use a handful of comms and types
  mutable unsigned next_slot_ = 0;
  std::uint32_t next_id_ = event_format::kFirstDynamicId;
};

}  // namespace encore::dump
