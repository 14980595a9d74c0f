// A datatype's type signature: its basic elements in order, kept as a tree of repeats so a
// vector of a million structs costs as much as one struct. It answers MPI_Get_elements, gives
// the element-size runs a reader needs to swap byte order, and drives external32 conversion.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <mpi.h>

#include "encore/byte_order.hpp"

namespace encore::replay {

struct SigNode;
using Signature = std::shared_ptr<const SigNode>;  // null: no data at all

struct SigItem {
  MPI_Datatype basic = MPI_DATATYPE_NULL;  // a basic element type (never a pair type), or
  Signature sub;                           // a nested signature
  std::uint64_t repeat = 0;
};

struct SigNode {
  std::vector<SigItem> items;
  std::uint64_t bytes = 0;     // of one pass over items
  std::uint64_t elements = 0;  // basic elements of one pass
};

// The signature of a predefined type (a pair type becomes its two parts).
Signature predefined_signature(MPI_Datatype predefined);

// Builds a signature from parts appended in order.
class SignatureBuilder {
 public:
  void add(const Signature& s, std::uint64_t times);
  Signature build();

 private:
  void add_item(const SigItem& item);
  std::vector<SigItem> items_;
};

Signature repeat_signature(const Signature& s, std::uint64_t times);

// Basic elements in the first `bytes` bytes of back-to-back repetitions of `s`;
// MPI_UNDEFINED when the bytes end inside a basic element.
MPI_Count count_elements(const Signature& s, MPI_Count bytes);

// Element-size runs (complex types as two halves) of one element of the type. Returns false
// (and leaves `out` partial) if more than `max_runs` runs would be needed.
bool signature_runs(const Signature& s, std::vector<SignatureRun>& out, std::size_t max_runs);

// Calls f(basic, n) for the runs of basic elements of `times` repetitions of `s`, in order.
template <class F>
void for_each_basic(const Signature& s, std::uint64_t times, F& f) {
  if (!s) return;
  for (std::uint64_t t = 0; t < times; ++t) {
    for (const SigItem& it : s->items) {
      if (it.sub)
        for_each_basic(it.sub, it.repeat, f);
      else
        f(it.basic, it.repeat);
    }
  }
}

}  // namespace encore::replay
