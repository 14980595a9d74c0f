// A raw body (what a light call leaves for the writer) encodes to the bytes the call would
// have written itself: uvarints, zigzag svarints and a send hash's 8 little-endian bytes, in
// slot order after the head; a malformed one is refused, never read past.
#include <cstdint>
#include <cstring>
#include <vector>

#include "raw_body.hpp"
#include <gtest/gtest.h>

#include "encore/byte_order.hpp"
#include "encore/varint.hpp"

namespace rb = encore::dump::raw_body;

namespace {

// A raw body built the way Call builds one, and the body encoded the way Call encodes it.
struct Both {
  std::vector<std::byte> raw = std::vector<std::byte>(rb::kMaxBytes);
  std::vector<std::byte> want;
  std::size_t n = 0;

  Both() {
    raw[0] = want.emplace_back(std::byte{0x9d});
    raw[1] = want.emplace_back(std::byte{0x05});
  }
  void slot(std::uint64_t v, rb::Kind kind) {
    std::memcpy(raw.data() + rb::kSlotsAt + 8 * n, &v, 8);
    raw[rb::kKindsAt + n] = static_cast<std::byte>(kind);
    raw[rb::kCountAt] = static_cast<std::byte>(++n);
    std::byte buf[encore::kMaxVarintBytes];
    std::size_t len = 8;
    if (kind == rb::kUvarint)
      len = encore::encode_uvarint(v, buf);
    else if (kind == rb::kSvarint)
      len = encore::encode_svarint(static_cast<std::int64_t>(v), buf);
    else
      encore::store_le(buf, v);
    want.insert(want.end(), buf, buf + len);
  }
  std::vector<std::byte> encode() const {
    std::vector<std::byte> out(rb::kMaxEncoded);
    out.resize(rb::encode_raw_body(raw.data(), out.data()));
    return out;
  }
};

TEST(DumpRawBody, EncodesLikeTheCallWould) {
  Both b;
  // MPI_Send's arguments: buffer flag, count, datatype id, dest, tag, communicator id.
  b.slot(0, rb::kUvarint);
  b.slot(static_cast<std::uint64_t>(std::int64_t{-3}), rb::kSvarint);
  b.slot(1 << 20, rb::kUvarint);
  b.slot(static_cast<std::uint64_t>(std::int64_t{-2}), rb::kSvarint);  // MPI_ANY_SOURCE
  b.slot(70000, rb::kSvarint);
  b.slot(~std::uint64_t{0}, rb::kUvarint);  // ten bytes
  // Its send hash extra and the extras' end.
  b.slot(2, rb::kUvarint);
  b.slot(0x0123456789abcdefULL, rb::kFixed64);
  b.slot(8, rb::kUvarint);
  b.slot(0, rb::kUvarint);
  EXPECT_EQ(rb::raw_size(b.raw.data()), rb::kSlotsAt + 8 * 10);
  EXPECT_EQ(b.encode(), b.want);
}

TEST(DumpRawBody, NoSlotsIsTheHeadAlone) {
  Both b;
  EXPECT_EQ(b.encode(), b.want);
  EXPECT_EQ(b.want.size(), 2u);
}

TEST(DumpRawBody, EveryFullSlotFitsTheEncodedRoom) {
  Both b;
  for (std::size_t i = 0; i < rb::kSlots; ++i) b.slot(~std::uint64_t{0}, rb::kUvarint);
  EXPECT_EQ(b.want.size(), rb::kMaxEncoded);
  EXPECT_EQ(b.encode(), b.want);
}

TEST(DumpRawBody, MalformedIsRefused) {
  Both b;
  b.slot(5, rb::kUvarint);
  b.raw[rb::kKindsAt] = std::byte{7};
  EXPECT_TRUE(b.encode().empty());
  Both c;
  c.raw[rb::kCountAt] = static_cast<std::byte>(rb::kSlots + 1);
  EXPECT_TRUE(c.encode().empty());
}

}  // namespace
