// The large-count (_c) constructors: built by the engine through large_count.hpp and by MPICH's
// own _c functions, the layouts and bytes must agree (their envelopes differ by design: MPICH
// keeps MPI_Count arguments apart, the engine records int ones).
#include <limits>

#include "compare.hpp"
#include "datatypes/datatype_error.hpp"
#include "datatypes/large_count.hpp"

namespace encore::replay::test {
namespace {

class LargeCount : public Twin {
 public:
  void same(MPI_Datatype mine, MPI_Datatype real, const std::string& what) {
    real_types.push_back(real);
    const Both t = commit({mine, real});
    check_layout(t, what);
    check_data(t, 1, what);
    check_data(t, 3, what);
  }
};

TEST_F(LargeCount, EveryConstructorMatchesMpich) {
  MPI_Datatype r = MPI_DATATYPE_NULL;
  MPI_Type_contiguous_c(5, MPI_DOUBLE, &r);
  same(large::contiguous(engine, 5, MPI_DOUBLE), r, "contiguous_c");
  MPI_Type_vector_c(3, 2, 4, MPI_INT, &r);
  same(large::vector(engine, 3, 2, 4, MPI_INT), r, "vector_c");
  MPI_Type_create_hvector_c(3, 1, -24, MPI_DOUBLE, &r);
  same(large::hvector(engine, 3, 1, -24, MPI_DOUBLE), r, "hvector_c");
  const MPI_Count bl[3] = {2, 0, 3}, disp[3] = {7, 1, 0}, bdisp[3] = {56, 8, 0};
  MPI_Type_indexed_c(3, bl, disp, MPI_INT, &r);
  same(large::indexed(engine, 3, bl, disp, MPI_INT), r, "indexed_c");
  MPI_Type_create_hindexed_c(3, bl, bdisp, MPI_SHORT, &r);
  same(large::hindexed(engine, 3, bl, bdisp, MPI_SHORT), r, "hindexed_c");
  MPI_Type_create_indexed_block_c(3, 2, disp, MPI_FLOAT, &r);
  same(large::indexed_block(engine, 3, 2, disp, MPI_FLOAT), r, "indexed_block_c");
  MPI_Type_create_hindexed_block_c(3, 1, bdisp, MPI_DOUBLE, &r);
  same(large::hindexed_block(engine, 3, 1, bdisp, MPI_DOUBLE), r, "hindexed_block_c");
  const MPI_Count sbl[2] = {1, 2}, sdisp[2] = {0, 8};
  const MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE};
  MPI_Type_create_struct_c(2, sbl, sdisp, types, &r);
  same(large::create_struct(engine, 2, sbl, sdisp, types), r, "create_struct_c");
  const MPI_Count sizes[2] = {6, 8}, sub[2] = {3, 4}, starts[2] = {1, 2};
  MPI_Type_create_subarray_c(2, sizes, sub, starts, MPI_ORDER_FORTRAN, MPI_INT, &r);
  same(large::subarray(engine, 2, sizes, sub, starts, MPI_ORDER_FORTRAN, MPI_INT), r, "subarray_c");
  MPI_Type_create_resized_c(MPI_INT, -4, 16, &r);
  same(large::resized(engine, MPI_INT, -4, 16), r, "resized_c");
}

TEST_F(LargeCount, DarrayMatchesMpich) {
  compare_elements = false;  // MPICH asserts in MPI_Get_elements on darray types
  const MPI_Count gsizes[2] = {8, 6};
  const int distribs[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC};
  const int dargs[2] = {MPI_DISTRIBUTE_DFLT_DARG, 2}, psizes[2] = {2, 2};
  MPI_Datatype r = MPI_DATATYPE_NULL;
  MPI_Type_create_darray_c(4, 1, 2, gsizes, distribs, dargs, psizes, MPI_ORDER_C, MPI_INT, &r);
  same(large::darray(engine, 4, 1, 2, gsizes, distribs, dargs, psizes, MPI_ORDER_C, MPI_INT), r,
       "darray_c");
}

TEST_F(LargeCount, CountsBeyondIntAreRefusedWithTheirName) {
  const MPI_Count big = MPI_Count{std::numeric_limits<int>::max()} + 1;
  try {
    large::vector(engine, 2, big, 4, MPI_INT);
    FAIL() << "no error";
  } catch (const DatatypeError& e) {
    EXPECT_NE(std::string(e.what()).find("blocklength = 2147483648"), std::string::npos)
        << e.what();
  }
  const MPI_Count bl[2] = {1, -big - 1}, disp[2] = {0, 0};
  EXPECT_THROW(large::indexed(engine, 2, bl, disp, MPI_INT), DatatypeError);
}

}  // namespace
}  // namespace encore::replay::test
