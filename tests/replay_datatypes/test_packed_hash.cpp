// TypeEngine::hash_packed streams a send's blocks into XXH3 without packing the message: its
// hash must be the one capture takes, XXH3-64 of MPICH's own MPI_Pack bytes.
#include <algorithm>
#include <cstdint>
#include <cstdlib>

#include "compare.hpp"
#define XXH_INLINE_ALL
#include <xxhash.h>

namespace encore::replay::test {
namespace {

class PackedHash : public Twin {
 public:
  // Hashes `count` elements of t over a patterned buffer both ways and compares.
  void expect_same(Both t, int count, const std::string& what) {
    commit(t);
    MPI_Aint lb = 0, extent = 0, tlb = 0, textent = 0;
    MPI_Type_get_extent(t.real, &lb, &extent);
    MPI_Type_get_true_extent(t.real, &tlb, &textent);
    // Room for the bytes of all count elements, the origin inside the buffer.
    const MPI_Aint last = (count > 0 ? count - 1 : 0) * extent;
    const MPI_Aint lo = std::min(tlb, tlb + last), hi = std::max(tlb, tlb + last) + textent;
    std::vector<std::byte> buf(static_cast<std::size_t>(hi - lo + 64));
    for (std::size_t i = 0; i < buf.size(); ++i) buf[i] = pattern(i);
    std::byte* origin = buf.data() + 32 - lo;
    int packed_size = 0;
    MPI_Pack_size(count, t.real, MPI_COMM_WORLD, &packed_size);
    std::vector<std::byte> packed(static_cast<std::size_t>(packed_size));
    int position = 0;
    ASSERT_EQ(
        MPI_Pack(origin, count, t.real, packed.data(), packed_size, &position, MPI_COMM_WORLD),
        MPI_SUCCESS)
        << what;
    const std::uint64_t real = XXH3_64bits(packed.data(), static_cast<std::size_t>(position));
    // Twice: the first call finds the type's cache slot empty (commit cleared it), the second
    // takes the one-block path when the type is one block.
    for (const char* pass : {"cold", "warm"}) {
      MPI_Count bytes = -1;
      const std::uint64_t mine = engine.hash_packed(origin, count, t.mine, bytes);
      EXPECT_EQ(bytes, position) << what << " (" << pass << ")";
      EXPECT_EQ(mine, real) << what << " (" << pass << ")";
    }
  }
  // unpack_one_block against MPI_Unpack of `bytes` packed bytes into count elements of t:
  // the same bytes land in the same places, or it declines and the engine's general unpack does.
  void expect_unpack(Both t, int count, int bytes, bool one_block, const std::string& what) {
    commit(t);
    MPI_Aint lb = 0, extent = 0;
    MPI_Type_get_extent(t.real, &lb, &extent);
    const auto room = static_cast<std::size_t>(std::abs(extent) * (count + 2) + 128);
    std::vector<std::byte> packed(static_cast<std::size_t>(bytes));
    for (std::size_t i = 0; i < packed.size(); ++i) packed[i] = pattern(i + 3);
    std::vector<std::byte> real(room, std::byte{0}), mine(room, std::byte{0});
    const MPI_Aint origin = 64 - lb;
    // MPICH unpacks whole elements only: a shorter message is its first bytes / size elements.
    int size = 0;
    MPI_Type_size(t.real, &size);
    int position = 0;
    ASSERT_EQ(MPI_Unpack(packed.data(), bytes, &position, real.data() + origin,
                         std::min(count, bytes / size), t.real, MPI_COMM_WORLD),
              MPI_SUCCESS)
        << what;
    (void)engine.size(t.mine);  // a lookup: the type's slot is warm, as after a receive's checks
    const bool took =
        engine.unpack_one_block(packed.data(), bytes, count, t.mine, mine.data() + origin);
    EXPECT_EQ(took, one_block) << what;
    if (!took) engine.unpack_bytes(packed.data(), bytes, count, t.mine, mine.data() + origin);
    EXPECT_EQ(mine, real) << what;
  }
};

TEST_F(PackedHash, OneBlockTypesAtAnOffset) {
  // One block that starts past the type's origin: hashed and unpacked from there.
  const Both shifted = create_struct({3}, {24}, {named(MPI_INT)});
  expect_same(shifted, 1, "one block at byte 24");
  // Its extent is its size: several elements are one block too.
  expect_same(shifted, 4, "four elements of it");
  expect_same(resized(named(MPI_DOUBLE), 0, 16), 1, "double resized to 16");
  expect_same(resized(named(MPI_DOUBLE), 0, 16), 3, "three of them (strided)");
  expect_same(contiguous(5, named(MPI_SHORT)), 7, "contiguous shorts x7");
}

TEST_F(PackedHash, OneBlockUnpackMatchesMpich) {
  expect_unpack(named(MPI_DOUBLE), 4, 32, true, "4 doubles");
  expect_unpack(named(MPI_DOUBLE), 4, 8, true, "a shorter message");
  expect_unpack(named(MPI_CHAR), 40, 40, true, "40 chars (a copy over 32 bytes)");
  expect_unpack(named(MPI_INT), 5, 20, true, "20 bytes (16 to 32)");
  expect_unpack(named(MPI_SHORT), 3, 6, true, "6 bytes (under 8)");
  expect_unpack(create_struct({3}, {24}, {named(MPI_INT)}), 1, 12, true, "block at byte 24");
  expect_unpack(resized(named(MPI_DOUBLE), 0, 16), 3, 24, false, "strided doubles");
  expect_unpack(vector(3, 1, 2, named(MPI_INT)), 1, 12, false, "a vector");
}

TEST_F(PackedHash, ContiguousAndEmpty) {
  expect_same(named(MPI_DOUBLE), 7, "7 doubles");
  expect_same(contiguous(3, named(MPI_INT)), 5, "contiguous 3 int x5");
  expect_same(named(MPI_INT), 0, "no element");
  expect_same(vector(4, 0, 2, named(MPI_INT)), 3, "vector of empty blocks");
}

TEST_F(PackedHash, Vectors) {
  // A halo column: one double per row, far more bytes than the gathering buffer holds.
  expect_same(vector(3000, 1, 514, named(MPI_DOUBLE)), 1, "column of 3000 doubles");
  expect_same(vector(100, 1, 7, named(MPI_INT)), 3, "column of ints x3");
  expect_same(vector(50, 2, 5, named(MPI_DOUBLE)), 2, "vector 16-byte blocks");
  expect_same(vector(40, 3, 4, named(MPI_SHORT)), 4, "vector 6-byte blocks");
  expect_same(hvector(6, 1, -16, named(MPI_DOUBLE)), 2, "hvector negative stride");
  // One element: the column loop, over several fills of the buffer.
  expect_same(hvector(2500, 1, -16, named(MPI_DOUBLE)), 1, "column with negative stride");
  expect_same(vector(3000, 1, 3, named(MPI_INT)), 1, "column of ints");
  expect_same(vector(1500, 1, 3, named(MPI_DOUBLE_INT)), 1, "column of 16-byte pairs");
  expect_same(vector(2000, 3, 4, named(MPI_SHORT)), 1, "column of 6-byte blocks");
  // Blocks longer than the buffer go into the hash as they lie.
  expect_same(vector(3, 3000, 4000, named(MPI_DOUBLE)), 2, "vector of 24000-byte blocks");
}

TEST_F(PackedHash, LongMessagesAndWholeColumns) {
  // Long messages: around 1 KiB, a halo row, and a contiguous type past the one-block cache.
  expect_same(named(MPI_DOUBLE), 127, "1016 bytes (inline)");
  expect_same(named(MPI_DOUBLE), 128, "1024 bytes (library)");
  expect_same(named(MPI_DOUBLE), 512, "a 4 KiB row");
  expect_same(contiguous(300, named(MPI_INT)), 3, "3600 contiguous bytes");
  // A column that fits the gathering buffer is hashed in one go: short, 1 KiB, halo2d's 256
  // doubles, exactly the buffer's 8 KiB, and one element more (streamed).
  expect_same(vector(100, 1, 7, named(MPI_INT)), 1, "400-byte column");
  expect_same(vector(128, 1, 9, named(MPI_DOUBLE)), 1, "1024-byte column");
  expect_same(vector(256, 1, 514, named(MPI_DOUBLE)), 1, "halo2d's column");
  expect_same(vector(1024, 1, 3, named(MPI_DOUBLE)), 1, "8 KiB column");
  expect_same(vector(1025, 1, 3, named(MPI_DOUBLE)), 1, "8 KiB + 8 column");
  expect_same(vector(700, 1, 2, named(MPI_DOUBLE_INT)), 1, "column of 16-byte pairs");
}

TEST_F(PackedHash, Indexed) {
  expect_same(indexed({2, 1, 4}, {0, 5, 9}, named(MPI_FLOAT)), 3, "indexed float");
  expect_same(indexed_block(2, {7, 0, 3}, named(MPI_DOUBLE)), 2, "indexed_block out of order");
  expect_same(hindexed({1, 3}, {40, 0}, named(MPI_INT)), 5, "hindexed");
}

TEST_F(PackedHash, Structs) {
  expect_same(
      create_struct({1, 2, 1}, {0, 8, 24}, {named(MPI_CHAR), named(MPI_INT), named(MPI_DOUBLE)}), 9,
      "struct char,int,double");
  const Both inner = vector(5, 1, 3, named(MPI_INT));
  expect_same(create_struct({2, 1}, {0, 80}, {inner, named(MPI_DOUBLE)}), 3, "struct of vectors");
}

TEST_F(PackedHash, Subarrays) {
  expect_same(subarray({64, 64}, {62, 1}, {1, 0}, MPI_ORDER_C, named(MPI_DOUBLE)), 1,
              "subarray column");
  expect_same(subarray({8, 9, 10}, {3, 4, 5}, {1, 2, 3}, MPI_ORDER_FORTRAN, named(MPI_INT)), 2,
              "subarray 3-d");
}

TEST_F(PackedHash, UncommittedIsRefused) {
  const Both t = vector(4, 1, 2, named(MPI_INT));
  std::vector<int> data(16);
  MPI_Count bytes = 0;
  EXPECT_THROW(engine.hash_packed(data.data(), 1, t.mine, bytes), DatatypeError);
}

}  // namespace
}  // namespace encore::replay::test
