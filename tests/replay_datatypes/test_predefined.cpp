// Every predefined MPICH datatype: size, bounds, envelope and packed bytes as the real library.
#include "compare.hpp"
#include "datatypes/predefined.hpp"

namespace encore::replay::test {
namespace {

using Predefined_ = Twin;

TEST_F(Predefined_, EveryTypeMatchesMpich) {
  int n = 0;
  for (const Predefined* p = predefined_begin(); p != predefined_end(); ++p, ++n) {
    const Both t = named(p->handle);
    check_layout(t, p->name);
    check_contents(t, p->name);
    if (p->size > 0) {
      check_data(t, 1, p->name);
      check_data(t, 3, p->name);
    }
    EXPECT_TRUE(engine.is_predefined(p->handle));
    EXPECT_TRUE(engine.is_committed(p->handle));
  }
  EXPECT_GE(n, 60);
}

// Builtin handles encode their size in bits 8..15; the table must agree.
TEST_F(Predefined_, BuiltinHandlesEncodeTheirSize) {
  for (const Predefined* p = predefined_begin(); p != predefined_end(); ++p) {
    const auto h = static_cast<unsigned>(p->handle);
    if ((h & 0xfc000000u) != 0x4c000000u) continue;
    EXPECT_EQ(static_cast<int>((h >> 8) & 0xff), p->size) << p->name;
  }
}

// The pair types MPICH lays out as C structs: measured once, pinned here.
TEST_F(Predefined_, PairTypeLayouts) {
  struct Expect {
    MPI_Datatype t;
    MPI_Count size;
    MPI_Aint extent, true_extent;
  };
  for (const Expect& e : {Expect{MPI_FLOAT_INT, 8, 8, 8}, Expect{MPI_DOUBLE_INT, 12, 16, 12},
                          Expect{MPI_LONG_INT, 12, 16, 12}, Expect{MPI_SHORT_INT, 6, 8, 8},
                          Expect{MPI_2INT, 8, 8, 8}, Expect{MPI_LONG_DOUBLE_INT, 20, 32, 20}}) {
    EXPECT_EQ(engine.size(e.t), e.size);
    EXPECT_EQ(engine.extent(e.t).lb, 0);
    EXPECT_EQ(engine.extent(e.t).extent, e.extent);
    EXPECT_EQ(engine.true_extent(e.t).lb, 0);
    EXPECT_EQ(engine.true_extent(e.t).extent, e.true_extent);
  }
}

bool same(const std::vector<SignatureRun>& a, std::vector<SignatureRun> b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].elem_size != b[i].elem_size || a[i].repeat != b[i].repeat) return false;
  return true;
}

TEST_F(Predefined_, SignaturesSplitPairsAndComplexHalves) {
  EXPECT_TRUE(same(engine.signature(MPI_DOUBLE), {{8, 1}}));
  EXPECT_TRUE(same(engine.signature(MPI_DOUBLE_INT), {{8, 1}, {4, 1}}));
  EXPECT_TRUE(same(engine.signature(MPI_SHORT_INT), {{2, 1}, {4, 1}}));
  EXPECT_TRUE(same(engine.signature(MPI_2INT), {{4, 2}}));
  EXPECT_TRUE(same(engine.signature(MPI_LONG_DOUBLE_INT), {{16, 1}, {4, 1}}));
  EXPECT_TRUE(same(engine.signature(MPI_C_DOUBLE_COMPLEX), {{8, 2}}));
  EXPECT_TRUE(same(engine.signature(MPI_C_LONG_DOUBLE_COMPLEX), {{16, 2}}));
  EXPECT_TRUE(engine.signature(MPI_LB).empty());
  // A complex is one basic element for MPI_Get_elements, a pair is two.
  EXPECT_EQ(engine.get_elements(MPI_C_DOUBLE_COMPLEX, 32), 2);
  EXPECT_EQ(engine.get_elements(MPI_DOUBLE_INT, 24), 4);
  EXPECT_EQ(engine.get_elements(MPI_DOUBLE_INT, 20), 3);
  EXPECT_EQ(engine.get_elements(MPI_DOUBLE_INT, 10), MPI_UNDEFINED);
}

}  // namespace
}  // namespace encore::replay::test
