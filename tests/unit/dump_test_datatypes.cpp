// Element-size signatures of derived datatypes (what makes a payload convertible between byte
// orders), and that packing in signature order gives the elements MPI would send.
#include <cstring>
#include <vector>

#include "datatypes.hpp"
#include <gtest/gtest.h>
#include <mpi.h>

using encore::SignatureRun;
using encore::dump::type_signature;

namespace {

std::vector<std::pair<std::uint32_t, std::uint64_t>> runs(MPI_Datatype t) {
  std::vector<std::pair<std::uint32_t, std::uint64_t>> out;
  for (const SignatureRun& r : type_signature(t)) out.emplace_back(r.elem_size, r.repeat);
  return out;
}

using Runs = std::vector<std::pair<std::uint32_t, std::uint64_t>>;

TEST(DatatypeSignature, Predefined) {
  EXPECT_EQ(runs(MPI_DOUBLE), (Runs{{8, 1}}));
  EXPECT_EQ(runs(MPI_CHAR), (Runs{{1, 1}}));
  EXPECT_EQ(runs(MPI_2INT), (Runs{{4, 2}}));
  EXPECT_EQ(runs(MPI_DOUBLE_INT), (Runs{{8, 1}, {4, 1}}));
  EXPECT_EQ(runs(MPI_C_DOUBLE_COMPLEX), (Runs{{8, 2}}));
}

TEST(DatatypeSignature, VectorOfDoubles) {
  MPI_Datatype column;
  MPI_Type_vector(5, 2, 10, MPI_DOUBLE, &column);
  EXPECT_EQ(runs(column), (Runs{{8, 10}}));
  MPI_Type_free(&column);
}

TEST(DatatypeSignature, IndexedSumsBlockLengths) {
  MPI_Datatype t;
  const int lengths[] = {1, 3, 2};
  const int displs[] = {0, 4, 10};
  MPI_Type_indexed(3, lengths, displs, MPI_INT, &t);
  EXPECT_EQ(runs(t), (Runs{{4, 6}}));
  MPI_Type_free(&t);
}

TEST(DatatypeSignature, StructKeepsOrder) {
  struct Particle {
    int id;
    double pos[3];
    short flag;
  };
  MPI_Datatype t;
  const int lengths[] = {1, 3, 1};
  const MPI_Aint displs[] = {offsetof(Particle, id), offsetof(Particle, pos),
                             offsetof(Particle, flag)};
  const MPI_Datatype types[] = {MPI_INT, MPI_DOUBLE, MPI_SHORT};
  MPI_Type_create_struct(3, lengths, displs, types, &t);
  EXPECT_EQ(runs(t), (Runs{{4, 1}, {8, 3}, {2, 1}}));
  // A contiguous run of two of them repeats the pattern.
  MPI_Datatype two;
  MPI_Type_contiguous(2, t, &two);
  EXPECT_EQ(runs(two), (Runs{{4, 1}, {8, 3}, {2, 1}, {4, 1}, {8, 3}, {2, 1}}));
  MPI_Type_free(&two);
  MPI_Type_free(&t);
}

TEST(DatatypeSignature, SubarrayCountsTheSubarray) {
  MPI_Datatype t;
  const int sizes[] = {8, 6};
  const int sub[] = {3, 4};
  const int starts[] = {2, 1};
  MPI_Type_create_subarray(2, sizes, sub, starts, MPI_ORDER_C, MPI_FLOAT, &t);
  EXPECT_EQ(runs(t), (Runs{{4, 12}}));
  MPI_Type_free(&t);
}

TEST(DatatypeSignature, ResizedAndDupKeepTheirBase) {
  MPI_Datatype resized, dup;
  MPI_Type_create_resized(MPI_INT, 0, 16, &resized);
  MPI_Type_dup(MPI_DOUBLE, &dup);
  EXPECT_EQ(runs(resized), (Runs{{4, 1}}));
  EXPECT_EQ(runs(dup), (Runs{{8, 1}}));
  MPI_Type_free(&resized);
  MPI_Type_free(&dup);
}

TEST(DatatypeLayout, VectorIsNotContiguousButPacksInOrder) {
  MPI_Datatype column;
  MPI_Type_vector(4, 1, 3, MPI_INT, &column);
  MPI_Type_commit(&column);
  encore::dump::Datatypes types;
  types.create(column);
  const auto& info = types.info(column);
  EXPECT_FALSE(info.contiguous);
  EXPECT_EQ(info.size, 16);
  int grid[12];
  for (int i = 0; i < 12; ++i) grid[i] = i;
  int packed[4] = {};
  int pos = 0;
  MPI_Pack(grid, 1, column, packed, sizeof packed, &pos, MPI_COMM_SELF);
  EXPECT_EQ(pos, 16);
  EXPECT_EQ(packed[0], 0);
  EXPECT_EQ(packed[1], 3);
  EXPECT_EQ(packed[3], 9);
  const auto& contig = types.info(MPI_DOUBLE);
  EXPECT_TRUE(contig.contiguous);
  MPI_Type_free(&column);
}

TEST(DatatypeLayout, FreedTypeWhoseHandleIsReusedGetsItsOwnLayout) {
  // info() answers the last type asked for first: a freed type's handle value, reused by a
  // new type of another layout, must not get the old layout.
  encore::dump::Datatypes types;
  MPI_Datatype wide;
  MPI_Type_contiguous(4, MPI_DOUBLE, &wide);
  MPI_Type_commit(&wide);
  const auto wide_id = types.create(wide);
  EXPECT_EQ(types.info(wide).size, 32);
  EXPECT_EQ(types.info(wide).size, 32);  // from the last-found entry
  EXPECT_EQ(types.id(wide), wide_id);
  const MPI_Datatype freed_value = wide;
  EXPECT_EQ(types.release(wide), wide_id);
  MPI_Type_free(&wide);
  // MPICH hands the freed value out again for the next type; create types until it does.
  std::vector<MPI_Datatype> made;
  MPI_Datatype column = MPI_DATATYPE_NULL;
  for (int i = 0; i < 16 && column != freed_value; ++i) {
    MPI_Type_vector(3, 1, 2, MPI_INT, &column);
    MPI_Type_commit(&column);
    made.push_back(column);
  }
  ASSERT_EQ(column, freed_value) << "MPICH did not reuse the freed handle value";
  const auto column_id = types.create(column);
  EXPECT_NE(column_id, wide_id);
  EXPECT_EQ(types.id(column), column_id);
  const auto& info = types.info(column);
  EXPECT_EQ(info.size, 12);
  EXPECT_FALSE(info.contiguous);
  EXPECT_EQ(types.info(MPI_DOUBLE).size, 8);  // alternating with another type
  EXPECT_EQ(types.info(column).size, 12);
  for (MPI_Datatype& t : made) MPI_Type_free(&t);
}

}  // namespace
