// MPI_Pack_external("external32") against MPICH where MPICH is right, and against the MPI
// standard's encoding where it is not (MPICH sizes pair types 0 and byte-swaps x87 long
// double as if it were binary128).
#include <cstddef>
#include <cstring>

#include "compare.hpp"

namespace encore::replay::test {
namespace {

using External32 = Twin;

// Types with lb >= 0 only: the buffers start at the origin.
void compare_external(Twin& tw, Both t, int count, const std::string& what) {
  SCOPED_TRACE(what);
  tw.commit(t);
  MPI_Aint real_size = 0;
  MPI_Pack_external_size("external32", count, t.real, &real_size);
  EXPECT_EQ(tw.engine.pack_external_size(count, t.mine), real_size);
  const TypeEngine::Extent x = tw.engine.extent(t.mine);
  std::vector<std::byte> src(static_cast<std::size_t>(x.extent * count + 64));
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<std::byte>(i % 7 * 3 + 1);
  std::vector<std::byte> real(static_cast<std::size_t>(real_size)), mine(real.size());
  MPI_Aint pos = 0;
  MPI_Pack_external("external32", src.data(), count, t.real, real.data(), real_size, &pos);
  EXPECT_EQ(tw.engine.pack_external(src.data(), count, t.mine, mine.data()), pos);
  EXPECT_EQ(mine, real);
  // And back: unpack_external(pack_external(x)) == x on the covered positions.
  std::vector<std::byte> back(src.size()), real_back(src.size());
  tw.engine.unpack_external(mine.data(), count, t.mine, back.data());
  pos = 0;
  MPI_Unpack_external("external32", real.data(), real_size, &pos, real_back.data(), count, t.real);
  EXPECT_EQ(back, real_back);
}

TEST_F(External32, BasicTypesMatchMpich) {
  for (MPI_Datatype t : {MPI_CHAR,
                         MPI_SIGNED_CHAR,
                         MPI_UNSIGNED_CHAR,
                         MPI_BYTE,
                         MPI_SHORT,
                         MPI_UNSIGNED_SHORT,
                         MPI_INT,
                         MPI_UNSIGNED,
                         MPI_FLOAT,
                         MPI_DOUBLE,
                         MPI_LONG_LONG_INT,
                         MPI_UNSIGNED_LONG_LONG,
                         MPI_INT8_T,
                         MPI_INT16_T,
                         MPI_INT32_T,
                         MPI_INT64_T,
                         MPI_UINT8_T,
                         MPI_UINT16_T,
                         MPI_UINT32_T,
                         MPI_UINT64_T,
                         MPI_C_BOOL,
                         MPI_AINT,
                         MPI_OFFSET,
                         MPI_COUNT,
                         MPI_C_FLOAT_COMPLEX,
                         MPI_C_DOUBLE_COMPLEX,
                         MPI_INTEGER,
                         MPI_REAL,
                         MPI_DOUBLE_PRECISION,
                         MPI_CHARACTER,
                         MPI_LOGICAL}) {
    compare_external(*this, named(t), 3, "type " + std::to_string(t));
  }
}

TEST_F(External32, LongIsFourBytesBigEndian) {
  const long v[2] = {-2, 0x12345678};
  std::byte out[8];
  EXPECT_EQ(engine.pack_external_size(2, MPI_LONG), 8);
  engine.pack_external(v, 2, MPI_LONG, out);
  const unsigned char want[8] = {0xff, 0xff, 0xff, 0xfe, 0x12, 0x34, 0x56, 0x78};
  EXPECT_EQ(std::memcmp(out, want, 8), 0);
  long back[2] = {};
  engine.unpack_external(out, 2, MPI_LONG, back);
  EXPECT_EQ(back[0], -2);
  EXPECT_EQ(back[1], 0x12345678);
  const long big = 1L << 40;  // does not fit: MPI_ERR_CONVERSION
  EXPECT_THROW(engine.pack_external(&big, 1, MPI_LONG, out), DatatypeError);
  const unsigned long ubig = 0xfffffffful;
  engine.pack_external(&ubig, 1, MPI_UNSIGNED_LONG, out);
  unsigned long uback = 0;
  engine.unpack_external(out, 1, MPI_UNSIGNED_LONG, &uback);
  EXPECT_EQ(uback, 0xfffffffful);
}

TEST_F(External32, DerivedTypesMatchMpich) {
  compare_external(*this, vector(3, 2, 4, named(MPI_INT)), 2, "vector of int");
  compare_external(*this, subarray({4, 5}, {2, 3}, {1, 1}, MPI_ORDER_C, named(MPI_SHORT)), 1,
                   "subarray of short");
  compare_external(*this, hvector(2, 3, 40, named(MPI_DOUBLE)), 2, "hvector of double");
}

// MPICH 4.0.2 crashes (SIGILL) in MPI_Pack_external_size on structs of mixed types, so a
// struct is checked against MPICH's external32 of each member in turn.
TEST_F(External32, StructIsItsMembersInOrder) {
  struct S {
    int i;
    double d;
    char c[2];
    long l;
  };
  const int bl[4] = {1, 1, 2, 1};
  const MPI_Aint disp[4] = {offsetof(S, i), offsetof(S, d), offsetof(S, c), offsetof(S, l)};
  const MPI_Datatype types[4] = {MPI_INT, MPI_DOUBLE, MPI_CHAR, MPI_LONG};
  const MPI_Datatype t = engine.create_struct(4, bl, disp, types);
  engine.commit(t);
  const S v[2] = {{-3, 2.5, {'a', 'b'}, -70000}, {9, -0.125, {'y', 'z'}, 123456}};
  std::vector<std::byte> want;
  for (const S& e : v) {
    const void* fields[4] = {&e.i, &e.d, e.c, &e.l};
    for (int k = 0; k < 4; ++k) {
      MPI_Aint n = 0, pos = 0;
      MPI_Pack_external_size("external32", bl[k], types[k], &n);
      std::vector<std::byte> part(static_cast<std::size_t>(n));
      MPI_Pack_external("external32", fields[k], bl[k], types[k], part.data(), n, &pos);
      want.insert(want.end(), part.begin(), part.end());
    }
  }
  ASSERT_EQ(engine.pack_external_size(2, t), static_cast<MPI_Count>(want.size()));
  std::vector<std::byte> mine(want.size());
  engine.pack_external(v, 2, t, mine.data());
  EXPECT_EQ(mine, want);
  S back[2] = {};
  engine.unpack_external(mine.data(), 2, t, back);
  for (int e = 0; e < 2; ++e) {
    EXPECT_EQ(back[e].i, v[e].i);
    EXPECT_EQ(back[e].d, v[e].d);
    EXPECT_EQ(back[e].c[1], v[e].c[1]);
    EXPECT_EQ(back[e].l, v[e].l);
  }
}

TEST_F(External32, PairTypesAndLongDouble) {
  EXPECT_EQ(engine.pack_external_size(1, MPI_DOUBLE_INT), 12);
  EXPECT_EQ(engine.pack_external_size(1, MPI_LONG_INT), 8);
  EXPECT_EQ(engine.pack_external_size(1, MPI_SHORT_INT), 6);
  struct {
    double d;
    int i;
  } di{1.0, 7};
  std::byte out[12];
  engine.pack_external(&di, 1, MPI_DOUBLE_INT, out);
  const unsigned char want[12] = {0x3f, 0xf0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7};
  EXPECT_EQ(std::memcmp(out, want, 12), 0);

  // IEEE binary128 for 1.0 and -2.5: sign, 15-bit exponent (bias 16383), 112-bit fraction.
  const long double ld[2] = {1.0L, -2.5L};
  std::byte q[32];
  EXPECT_EQ(engine.pack_external(ld, 2, MPI_LONG_DOUBLE, q), 32);
  unsigned char one[16] = {0x3f, 0xff}, m25[16] = {0xc0, 0x00, 0x40};
  EXPECT_EQ(std::memcmp(q, one, 16), 0);
  EXPECT_EQ(std::memcmp(q + 16, m25, 16), 0);
  long double back[2] = {};
  engine.unpack_external(q, 2, MPI_LONG_DOUBLE, back);
  EXPECT_EQ(back[0], 1.0L);
  EXPECT_EQ(back[1], -2.5L);
  EXPECT_THROW(engine.pack_external_size(1, MPIX_C_FLOAT16), DatatypeError);
}

}  // namespace
}  // namespace encore::replay::test
