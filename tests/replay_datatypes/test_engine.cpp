// Handle life cycle, errors, partial unpack inside an element, signatures and the fast paths.
#include "compare.hpp"

namespace encore::replay::test {
namespace {

using Engine = Twin;

TEST_F(Engine, HandlesAreNewAndNeverReused) {
  const MPI_Datatype a = engine.contiguous(2, MPI_INT);
  MPI_Datatype b = engine.dup(a);
  EXPECT_EQ(a, TypeEngine::kFirstHandle);
  EXPECT_EQ(b, a + 1);
  engine.free(b);
  EXPECT_EQ(b, MPI_DATATYPE_NULL);
  EXPECT_EQ(engine.contiguous(1, MPI_INT), a + 2);
  EXPECT_FALSE(engine.is_valid(a + 1));
}

TEST_F(Engine, ErrorsAreDatatypeErrors) {
  EXPECT_THROW(engine.size(MPI_DATATYPE_NULL), DatatypeError);
  EXPECT_THROW(engine.size(static_cast<MPI_Datatype>(0x4c000999)), DatatypeError);
  MPI_Datatype t = engine.vector(2, 1, 2, MPI_INT);
  const MPI_Datatype kept = t;
  std::byte out[8];
  int in[3] = {1, 2, 3};
  EXPECT_THROW(engine.pack(in, 1, t, out), DatatypeError);  // not committed
  engine.commit(t);
  EXPECT_EQ(engine.pack(in, 1, t, out), 8);
  engine.free(t);
  try {
    engine.size(kept);
    FAIL() << "freed handle accepted";
  } catch (const DatatypeError& e) {
    EXPECT_NE(std::string(e.what()).find("freed"), std::string::npos) << e.what();
  }
  MPI_Datatype predefined = MPI_INT;
  EXPECT_THROW(engine.free(predefined), DatatypeError);
  EXPECT_THROW(engine.contiguous(-1, MPI_INT), DatatypeError);
  EXPECT_THROW(engine.vector(1, -2, 1, MPI_INT), DatatypeError);
  EXPECT_THROW(engine.contents(MPI_DOUBLE), DatatypeError);
  const int g[1] = {10}, d[1] = {MPI_DISTRIBUTE_BLOCK}, a[1] = {2}, p[1] = {2};
  EXPECT_THROW(engine.darray(2, 0, 1, g, d, a, p, MPI_ORDER_C, MPI_INT), DatatypeError);
  EXPECT_THROW(engine.darray(2, 2, 1, g, d, a, p, MPI_ORDER_C, MPI_INT), DatatypeError);
  const int s[1] = {4}, ss[1] = {3}, st[1] = {2};
  EXPECT_THROW(engine.subarray(1, s, ss, st, MPI_ORDER_C, MPI_INT), DatatypeError);
  EXPECT_THROW(engine.subarray(1, s, ss, st, 99, MPI_INT), DatatypeError);
  const MPI_Datatype c = engine.contiguous(1, MPI_INT);
  engine.commit(c);
  int v = 1;
  EXPECT_THROW(engine.unpack_bytes(out, 5, 1, c, &v), DatatypeError);  // longer than posted
}

TEST_F(Engine, PartsOutliveTheirHandlesAndComeBackFromGetContents) {
  MPI_Datatype inner = engine.vector(2, 1, 3, MPI_INT);
  engine.commit(inner);
  const MPI_Datatype inner_handle = inner;
  const MPI_Datatype outer = engine.contiguous(2, inner);
  engine.free(inner);
  EXPECT_FALSE(engine.is_valid(inner_handle));
  EXPECT_EQ(engine.size(outer), 16);  // still usable
  Contents c = engine.contents(outer);
  ASSERT_EQ(c.types.size(), 1u);
  EXPECT_EQ(c.types[0], inner_handle);  // revived under its old handle, still committed
  EXPECT_TRUE(engine.is_committed(inner_handle));
  EXPECT_EQ(engine.size(inner_handle), 8);
  engine.free(c.types[0]);
  EXPECT_FALSE(engine.is_valid(inner_handle));
}

TEST_F(Engine, PartialUnpackStopsInsideAnElement) {
  const MPI_Datatype t = engine.vector(3, 1, 2, MPI_INT);  // ints 0, 2, 4
  engine.commit(t);
  const int src[3] = {0x11111111, 0x22222222, 0x33333333};
  int dst[6] = {};
  engine.unpack_bytes(reinterpret_cast<const std::byte*>(src), 6, 1, t, dst);
  EXPECT_EQ(dst[0], 0x11111111);
  EXPECT_EQ(dst[2], 0x2222);  // two bytes of the second int (little-endian host)
  EXPECT_EQ(dst[4], 0);
  EXPECT_EQ(engine.get_elements(t, 6), MPI_UNDEFINED);
  EXPECT_EQ(engine.get_elements(t, 8), 2);
  EXPECT_EQ(engine.get_count(t, 8), MPI_UNDEFINED);
  EXPECT_EQ(engine.get_count(t, 24), 2);
}

TEST_F(Engine, SignaturesStayCompact) {
  const MPI_Datatype s = [&] {
    const int bl[2] = {1, 1};
    const MPI_Aint d[2] = {0, 8};
    const MPI_Datatype ty[2] = {MPI_INT, MPI_DOUBLE};
    return engine.create_struct(2, bl, d, ty);
  }();
  const MPI_Datatype v = engine.contiguous(1000000, s);
  EXPECT_EQ(engine.size(v), 12000000);
  EXPECT_EQ(engine.get_elements(v, 12000000), 2000000);
  EXPECT_EQ(engine.get_elements(v, 12000004), 2000001);
  EXPECT_EQ(engine.get_elements(v, 12000006), MPI_UNDEFINED);
  EXPECT_TRUE(engine.signature(v, 100).empty());  // too many runs for the cap
  const MPI_Datatype dv = engine.vector(1000000, 2, 3, MPI_DOUBLE);
  const auto runs = engine.signature(dv);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].elem_size, 8u);
  EXPECT_EQ(runs[0].repeat, 2000000u);
  EXPECT_EQ(engine.node(dv).program.size(), 1u);  // one strided piece
}

TEST_F(Engine, ContiguousFastPath) {
  const MPI_Datatype t = engine.contiguous(4, MPI_DOUBLE);
  engine.commit(t);
  EXPECT_TRUE(engine.is_contiguous(t, 10));
  const MPI_Datatype r = engine.resized(MPI_INT, -4, 12);
  EXPECT_TRUE(engine.is_contiguous(r, 1));
  EXPECT_FALSE(engine.is_contiguous(r, 2));
  double in[8] = {1, 2, 3, 4, 5, 6, 7, 8}, out[8] = {};
  std::byte packed[64];
  EXPECT_EQ(engine.pack(in, 2, t, packed), 64);
  EXPECT_EQ(engine.unpack(packed, 2, t, out), 64);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(out[i], in[i]) << "element " << i;
}

}  // namespace
}  // namespace encore::replay::test
