// Signatures of types from the MPI-4 large-count constructors, which MPICH describes only
// through MPI_Type_get_envelope_c/get_contents_c (counts in the large-count array): each must
// equal the signature of the same type built by the int constructor.
#include <vector>

#include "datatypes.hpp"
#include <gtest/gtest.h>
#include <mpi.h>

using encore::SignatureRun;
using encore::dump::type_signature;

namespace {

using Runs = std::vector<std::pair<std::uint32_t, std::uint64_t>>;

Runs runs(MPI_Datatype t) {
  Runs out;
  for (const SignatureRun& r : type_signature(t)) out.emplace_back(r.elem_size, r.repeat);
  return out;
}

// Compares the signatures of a _c type and its int twin, then frees both.
void expect_twins(MPI_Datatype large, MPI_Datatype small, const Runs& want) {
  EXPECT_EQ(runs(large), want);
  EXPECT_EQ(runs(small), want);
  MPI_Type_free(&large);
  MPI_Type_free(&small);
}

TEST(LargeCountSignature, ContiguousVectorHvector) {
  MPI_Datatype a, b;
  MPI_Type_contiguous_c(5, MPI_INT, &a);
  MPI_Type_contiguous(5, MPI_INT, &b);
  expect_twins(a, b, {{4, 5}});
  MPI_Type_vector_c(3, 2, 4, MPI_DOUBLE, &a);
  MPI_Type_vector(3, 2, 4, MPI_DOUBLE, &b);
  expect_twins(a, b, {{8, 6}});
  MPI_Type_create_hvector_c(4, 3, 40, MPI_SHORT, &a);
  MPI_Type_create_hvector(4, 3, 40, MPI_SHORT, &b);
  expect_twins(a, b, {{2, 12}});
}

TEST(LargeCountSignature, IndexedFamilies) {
  MPI_Datatype a, b;
  const MPI_Count cl[] = {2, 1, 3}, cd[] = {0, 4, 7};
  const int il[] = {2, 1, 3}, id[] = {0, 4, 7};
  const MPI_Aint ad[] = {0, 16, 28};
  MPI_Type_indexed_c(3, cl, cd, MPI_INT, &a);
  MPI_Type_indexed(3, il, id, MPI_INT, &b);
  expect_twins(a, b, {{4, 6}});
  const MPI_Count chd[] = {0, 16, 28};
  MPI_Type_create_hindexed_c(3, cl, chd, MPI_INT, &a);
  MPI_Type_create_hindexed(3, il, ad, MPI_INT, &b);
  expect_twins(a, b, {{4, 6}});
  MPI_Type_create_indexed_block_c(3, 2, cd, MPI_DOUBLE, &a);
  MPI_Type_create_indexed_block(3, 2, id, MPI_DOUBLE, &b);
  expect_twins(a, b, {{8, 6}});
  MPI_Type_create_hindexed_block_c(3, 2, chd, MPI_CHAR, &a);
  MPI_Type_create_hindexed_block(3, 2, ad, MPI_CHAR, &b);
  expect_twins(a, b, {{1, 6}});
}

TEST(LargeCountSignature, StructKeepsOrderAndNests) {
  const MPI_Datatype types[] = {MPI_INT, MPI_DOUBLE, MPI_SHORT};
  const MPI_Count cl[] = {1, 3, 1}, cd[] = {0, 8, 32};
  const int il[] = {1, 3, 1};
  const MPI_Aint ad[] = {0, 8, 32};
  MPI_Datatype a, b;
  MPI_Type_create_struct_c(3, cl, cd, types, &a);
  MPI_Type_create_struct(3, il, ad, types, &b);
  const Runs one = {{4, 1}, {8, 3}, {2, 1}};
  EXPECT_EQ(runs(a), one);
  EXPECT_EQ(runs(b), one);
  // A _c type made of a _c type: the recursion reads both kinds of contents.
  MPI_Datatype two, resized;
  MPI_Type_contiguous_c(2, a, &two);
  EXPECT_EQ(runs(two), (Runs{{4, 1}, {8, 3}, {2, 1}, {4, 1}, {8, 3}, {2, 1}}));
  MPI_Type_create_resized_c(a, 0, 64, &resized);
  EXPECT_EQ(runs(resized), one);
  for (MPI_Datatype* t : {&a, &b, &two, &resized}) MPI_Type_free(t);
}

TEST(LargeCountSignature, SubarrayAndDarray) {
  MPI_Datatype a, b;
  const MPI_Count cs[] = {4, 6}, csub[] = {2, 3}, cst[] = {1, 2};
  const int is[] = {4, 6}, isub[] = {2, 3}, ist[] = {1, 2};
  MPI_Type_create_subarray_c(2, cs, csub, cst, MPI_ORDER_C, MPI_FLOAT, &a);
  MPI_Type_create_subarray(2, is, isub, ist, MPI_ORDER_C, MPI_FLOAT, &b);
  expect_twins(a, b, {{4, 6}});
  const MPI_Count cg[] = {12};
  const int ig[] = {12}, distrib[] = {MPI_DISTRIBUTE_BLOCK}, darg[] = {MPI_DISTRIBUTE_DFLT_DARG};
  const int psize[] = {3};
  MPI_Type_create_darray_c(3, 1, 1, cg, distrib, darg, psize, MPI_ORDER_C, MPI_INT, &a);
  MPI_Type_create_darray(3, 1, 1, ig, distrib, darg, psize, MPI_ORDER_C, MPI_INT, &b);
  expect_twins(a, b, {{4, 4}});
}

}  // namespace
