// The trace id of a predefined handle, by its name (MPI_COMM_WORLD, MPI_INT...), for tests that
// build events by hand.
#pragma once

#include <cstdint>
#include <string_view>

#include <gtest/gtest.h>

#include "encore/event_format.hpp"
#include "encore/mpi_table.hpp"

namespace encore::testing {

inline std::uint64_t predefined(HandleKind kind, std::string_view name) {
  const auto all = predefined_handles(kind);
  for (std::size_t i = 0; i < all.size(); ++i)
    if (name == all[i].name) return event_format::kFirstPredefinedId + i;
  ADD_FAILURE() << name << " is not predefined";
  return 0;
}

}  // namespace encore::testing
