// TypeEngine::hash_packed streams a send's blocks into XXH3 without packing the message: its
// hash must be the one capture takes, XXH3-64 of MPICH's own MPI_Pack bytes.
#include <algorithm>
#include <cstdint>

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
    MPI_Count bytes = -1;
    const std::uint64_t mine = engine.hash_packed(origin, count, t.mine, bytes);
    EXPECT_EQ(bytes, position) << what;
    EXPECT_EQ(mine, XXH3_64bits(packed.data(), static_cast<std::size_t>(position))) << what;
  }
};

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
