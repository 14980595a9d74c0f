// Derived datatypes built both in the engine and in MPICH: every answer and byte must agree.
#include "compare.hpp"

namespace encore::replay::test {
namespace {

using Derived = Twin;

TEST_F(Derived, Contiguous) {
  check(contiguous(5, named(MPI_INT)), "contiguous 5 int");
  check(contiguous(0, named(MPI_INT)), "contiguous 0 int");
  check(contiguous(2, named(MPI_DOUBLE_INT)), "contiguous 2 double_int", false);
}

TEST_F(Derived, Vectors) {
  check(vector(4, 2, 3, named(MPI_DOUBLE)), "vector 4x2 stride 3 double");
  check(vector(3, 1, -2, named(MPI_INT)), "vector negative stride");
  check(vector(4, 3, 3, named(MPI_FLOAT)), "vector that is contiguous");
  check(vector(3, 0, 2, named(MPI_INT)), "vector of empty blocks");
  check(hvector(3, 2, 24, named(MPI_SHORT)), "hvector");
  check(hvector(4, 1, -16, named(MPI_DOUBLE)), "hvector negative stride");
}

// The MPI-1 constructors removed in MPI-3 still exist in libmpich. MPICH 4.0's mpi.h (Debian
// 12) declares them too, with non-const arrays: declared here the same way (clang rejects a
// C function declared twice with other parameter types), for an mpi.h that leaves them out.
extern "C" int MPI_Type_hvector(int, int, MPI_Aint, MPI_Datatype, MPI_Datatype*);
extern "C" int MPI_Type_hindexed(int, int[], MPI_Aint[], MPI_Datatype, MPI_Datatype*);
extern "C" int MPI_Type_struct(int, int[], MPI_Aint[], MPI_Datatype[], MPI_Datatype*);

TEST_F(Derived, Mpi1Constructors) {
  MPI_Datatype r = MPI_DATATYPE_NULL;
  MPI_Type_hvector(3, 2, 40, MPI_INT, &r);
  real_types.push_back(r);
  check({engine.hvector_mpi1(3, 2, 40, MPI_INT), r}, "MPI_Type_hvector");
  int bls[2] = {1, 2};
  MPI_Aint disps[2] = {16, 0};
  MPI_Type_hindexed(2, bls, disps, MPI_DOUBLE, &r);
  real_types.push_back(r);
  check({engine.hindexed_mpi1(2, bls, disps, MPI_DOUBLE), r}, "MPI_Type_hindexed");
  MPI_Datatype types[2] = {MPI_CHAR, MPI_DOUBLE};
  MPI_Type_struct(2, bls, disps, types, &r);
  real_types.push_back(r);
  check({engine.struct_mpi1(2, bls, disps, types), r}, "MPI_Type_struct");
}

TEST_F(Derived, Indexed) {
  check(indexed({2, 0, 3, 1}, {0, 4, 5, 12}, named(MPI_INT)), "indexed with gaps");
  check(indexed({1, 1}, {5, -3}, named(MPI_DOUBLE)), "indexed out of order, negative");
  check(indexed({0, 0}, {1, 2}, named(MPI_INT)), "indexed all empty");
  check(hindexed({1, 2}, {20, 0}, named(MPI_INT)), "hindexed");
  check(indexed_block(2, {0, 3, 9}, named(MPI_SHORT)), "indexed_block");
  check(hindexed_block(1, {0, 16, 32, 48}, named(MPI_DOUBLE)), "hindexed_block regular");
  check(hindexed_block(2, {-8, 40}, named(MPI_INT)), "hindexed_block negative");
}

TEST_F(Derived, Structs) {
  const Both s =
      create_struct({1, 1, 1}, {0, 8, 16}, {named(MPI_INT), named(MPI_DOUBLE), named(MPI_CHAR)});
  check(s, "struct int+double+char (padded to 24)");
  EXPECT_EQ(engine.extent(s.mine).extent, 24);
  check(resized(s, 0, 17), "struct resized to 17");
  check(resized(s, -8, 40), "struct resized, negative lb");
  check(create_struct({2, 1}, {4, 0}, {named(MPI_CHAR), named(MPI_LONG_DOUBLE)}),
        "struct long double alignment");
  check(create_struct({1, 0, 1}, {0, 4, 4}, {named(MPI_INT), named(MPI_DOUBLE), named(MPI_SHORT)}),
        "struct with an empty block still aligns");
  check(create_struct({1, 1}, {0, 16}, {named(MPI_DOUBLE_INT), named(MPI_SHORT_INT)}),
        "struct of pair types", false);
  check(create_struct({1, 1, 1}, {-4, 0, 12}, {named(MPI_LB), named(MPI_INT), named(MPI_UB)}),
        "struct with MPI_LB/MPI_UB");
  // yaksa turns a struct of one type into an hindexed: no padding. (MPICH's MPI_Get_elements
  // divides by zero on structs of different types of one size: not compared.)
  compare_elements = false;
  check(create_struct({1, 1}, {0, 5}, {named(MPI_INT), named(MPI_INT)}), "struct int,int unpadded");
  check(create_struct({1, 1}, {0, 5}, {named(MPI_INT), named(MPI_INTEGER)}),
        "struct int,INTEGER (one yaksa type)");
  check(create_struct({1, 1}, {0, 5}, {named(MPI_INT), named(MPI_UNSIGNED)}),
        "struct int,unsigned (one yaksa type)");
  check(create_struct({1, 1}, {0, 5}, {named(MPI_INT), named(MPI_FLOAT)}),
        "struct int,float padded");
  check(create_struct({1, 1}, {0, 9}, {named(MPI_LONG), named(MPI_AINT)}),
        "struct long,aint (one yaksa type)");
  check(create_struct({1}, {0}, {s}), "struct of one struct");
  check(create_struct({1, 1}, {0, 30}, {s, dup(s)}), "struct of a struct and its dup");
  check(create_struct({1, 1}, {0, 30}, {s, contiguous(1, s)}), "struct of struct, contiguous 1");
  check(create_struct({1, 1}, {0, 30}, {s, resized(s, 0, 12)}), "struct of struct, resized");
}

TEST_F(Derived, NestedAndResized) {
  const Both s = create_struct({1, 2}, {0, 8}, {named(MPI_DOUBLE), named(MPI_INT)});
  check(vector(3, 2, 3, s), "vector of struct");
  const Both v = vector(2, 2, 5, named(MPI_INT));
  check(create_struct({2, 1}, {0, 64}, {v, named(MPI_CHAR)}), "struct of vectors");
  check(hvector(2, 1, -100, vector(3, 1, 2, s)), "hvector of vector of struct");
  check(resized(named(MPI_INT), -4, 12), "resized int, negative lb");
  check(contiguous(3, resized(named(MPI_INT), -4, 12)), "contiguous of resized");
  check(vector(2, 2, 1, resized(vector(2, 1, 2, named(MPI_INT)), 0, 4)), "interleaved vectors");
  check(dup(named(MPI_INT)), "dup of predefined");
  check(dup(vector(3, 1, 2, named(MPI_FLOAT))), "dup of vector");
  check(dup(dup(s)), "dup of dup");
}

TEST_F(Derived, Subarrays) {
  check(subarray({6, 5}, {3, 2}, {1, 2}, MPI_ORDER_C, named(MPI_DOUBLE)), "subarray 2-D C");
  check(subarray({6, 5}, {3, 2}, {1, 2}, MPI_ORDER_FORTRAN, named(MPI_DOUBLE)),
        "subarray 2-D Fortran");
  check(subarray({4, 5, 6}, {2, 3, 4}, {1, 0, 2}, MPI_ORDER_C, named(MPI_INT)), "subarray 3-D C");
  check(subarray({4, 5, 6}, {2, 3, 4}, {1, 0, 2}, MPI_ORDER_FORTRAN, named(MPI_INT)),
        "subarray 3-D Fortran");
  check(subarray({10}, {4}, {3}, MPI_ORDER_C, named(MPI_SHORT)), "subarray 1-D");
}

TEST_F(Derived, Darrays) {
  const int B = MPI_DISTRIBUTE_BLOCK, C = MPI_DISTRIBUTE_CYCLIC, N = MPI_DISTRIBUTE_NONE;
  const int D = MPI_DISTRIBUTE_DFLT_DARG;
  compare_elements = false;
  for (int order : {MPI_ORDER_C, MPI_ORDER_FORTRAN}) {
    const std::string o = order == MPI_ORDER_C ? " C" : " Fortran";
    for (int rank = 0; rank < 6; ++rank) {
      std::string r = o;
      r += " rank " + std::to_string(rank);
      check(darray(6, rank, {10, 9}, {B, B}, {D, D}, {2, 3}, order, named(MPI_DOUBLE)),
            "darray block" + r);
      check(darray(6, rank, {10, 9}, {C, C}, {D, 2}, {3, 2}, order, named(MPI_INT)),
            "darray cyclic" + r);
      check(darray(6, rank, {7, 5, 4}, {C, N, B}, {3, D, 2}, {3, 1, 2}, order, named(MPI_FLOAT)),
            "darray cyclic/none/block" + r);
    }
  }
}

}  // namespace
}  // namespace encore::replay::test
