// Builds the same datatype in the engine and in real MPICH and checks that every answer and
// every packed byte agree.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "datatypes/type_engine.hpp"
#include <gtest/gtest.h>
#include <mpi.h>

namespace encore::replay::test {

// One datatype twice: the engine's handle and MPICH's.
struct Both {
  MPI_Datatype mine;
  MPI_Datatype real;
};

// A test fixture owning an engine and releasing MPICH's types at the end.
class Twin : public ::testing::Test {
 public:
  ~Twin() override;
  Both named(MPI_Datatype t) { return {t, t}; }
  Both contiguous(int count, Both old);
  Both vector(int count, int bl, int stride, Both old);
  Both hvector(int count, int bl, MPI_Aint stride, Both old);
  Both indexed(std::vector<int> bls, std::vector<int> disps, Both old);
  Both hindexed(std::vector<int> bls, std::vector<MPI_Aint> disps, Both old);
  Both indexed_block(int bl, std::vector<int> disps, Both old);
  Both hindexed_block(int bl, std::vector<MPI_Aint> disps, Both old);
  Both create_struct(std::vector<int> bls, std::vector<MPI_Aint> disps,
                     const std::vector<Both>& types);
  Both subarray(std::vector<int> sizes, std::vector<int> subsizes, std::vector<int> starts,
                int order, Both old);
  Both darray(int size, int rank, std::vector<int> gsizes, std::vector<int> distribs,
              std::vector<int> dargs, std::vector<int> psizes, int order, Both old);
  Both resized(Both old, MPI_Aint lb, MPI_Aint extent);
  Both dup(Both old);
  Both commit(Both t);

  // Everything: bounds, envelope and contents, packed bytes for count 1 and 3, unpack,
  // partial receives and get_elements. `what` names the type in failure messages.
  // `partial` false skips the short messages: MPICH mishandles pair types inside derived
  // types there (writes nothing, MPI_Get_elements says 0).
  void check(Both t, const std::string& what, bool partial = true);
  void check_layout(Both t, const std::string& what);
  void check_contents(Both t, const std::string& what);
  void check_data(Both t, int count, const std::string& what, bool partial = true);

  TypeEngine engine;
  std::vector<MPI_Datatype> real_types;  // freed by the destructor
  // MPICH's MPI_Get_elements asserts on MPI_COMBINER_DARRAY types: darray tests turn it off.
  bool compare_elements = true;

 private:
  Both keep(MPI_Datatype mine, MPI_Datatype real) {
    real_types.push_back(real);
    return {mine, real};
  }
};

// A deterministic byte pattern.
inline std::byte pattern(std::size_t i) { return static_cast<std::byte>((i * 131 + 7) & 0xff); }

}  // namespace encore::replay::test
