// One datatype as the engine keeps it: MPICH's bounds, where its data lives, its signature and
// what MPI_Type_get_contents reports. Nodes are immutable once built and shared: a derived type
// keeps its parts alive after the application frees their handles, as MPI requires.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "block_program.hpp"
#include "predefined.hpp"
#include "signature.hpp"
#include <mpi.h>

namespace encore::replay {

// MPICH's fields. MPICH 4.0.2 as built by Debian computes them with yaksa (its typerep);
// the builders use yaksa's formulas so that queries answer exactly what MPICH answers.
struct Bounds {
  MPI_Count size = 0;
  MPI_Aint lb = 0, ub = 0;
  MPI_Aint true_lb = 0, true_ub = 0;
  MPI_Aint align = 1;  // yaksa's alignment: a struct's extent is padded to a multiple of it
  MPI_Aint extent() const noexcept { return ub - lb; }
};

struct Contents {
  int combiner = MPI_COMBINER_NAMED;
  std::vector<int> ints;
  std::vector<MPI_Aint> addrs;
  std::vector<MPI_Datatype> types;
};

struct TypeNode;
using NodePtr = std::shared_ptr<const TypeNode>;

struct TypeNode {
  Bounds bounds;
  Program program;      // the blocks of one element, relative to the buffer origin
  Signature signature;  // its basic elements
  const Predefined* predefined = nullptr;
  Contents contents;
  std::vector<NodePtr> children;  // parallel to contents.types; null for predefined ones
  // Which yaksa type object MPICH's typerep shares for this type: yaksa turns a dup, a
  // contiguous of 1, ... into the same object, and a struct whose entries are all the same
  // object becomes an (unpadded) hindexed. 0: a type of its own.
  std::uintptr_t yaksa_id = 0;
  std::uintptr_t identity() const noexcept {
    return yaksa_id ? yaksa_id : reinterpret_cast<std::uintptr_t>(this);
  }

  // One element is a single block of `size` bytes; true when `count` elements are too.
  bool single_block() const noexcept {
    return program.size() == 1 && !program[0].body && program[0].count == 1;
  }
  bool contiguous() const noexcept { return single_block() && bounds.extent() == bounds.size; }
};

}  // namespace encore::replay
