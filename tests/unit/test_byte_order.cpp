#include <cstdint>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "encore/byte_order.hpp"
#include "encore/error.hpp"

namespace encore {
namespace {

// Serialises values in the opposite of host order, as a foreign rank would.
template <class T>
void put_foreign(std::vector<std::byte>& out, T v) {
  std::byte b[sizeof(T)];
  std::memcpy(b, &v, sizeof v);
  for (std::size_t i = sizeof(T); i-- > 0;) out.push_back(b[i]);
}

template <class T>
T get_native(const std::vector<std::byte>& in, std::size_t offset) {
  T v;
  std::memcpy(&v, in.data() + offset, sizeof v);
  return v;
}

TEST(ByteOrder, HostAndNames) {
  const std::uint16_t probe = 1;
  std::uint8_t first;
  std::memcpy(&first, &probe, 1);
  EXPECT_EQ(host_byte_order(), first == 1 ? ByteOrder::little : ByteOrder::big);
  EXPECT_EQ(to_string(ByteOrder::big), "big");
  EXPECT_EQ(parse_byte_order("little"), ByteOrder::little);
  EXPECT_FALSE(parse_byte_order("middle"));
}

TEST(ByteOrder, LoadStoreLittleEndian) {
  std::byte b[8];
  store_le<std::uint32_t>(b, 0x11223344u);
  EXPECT_EQ(b[0], std::byte{0x44});
  EXPECT_EQ(load_le<std::uint32_t>(b), 0x11223344u);
  store_le<std::uint64_t>(b, 0x0102030405060708ull);
  EXPECT_EQ(b[7], std::byte{0x01});
  EXPECT_EQ(load_le<std::uint64_t>(b), 0x0102030405060708ull);
}

TEST(SwapElements, SingleRunOfDoubles) {
  const double values[] = {1.5, -0.0, 3.25e300, 7};
  std::vector<std::byte> buf;
  for (double d : values) put_foreign(buf, d);
  const SignatureRun sig[] = {{8, 4}};
  swap_elements(buf, sig);
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(get_native<double>(buf, 8 * i), values[i]);
}

TEST(SwapElements, StructSignatureRepeatsCyclically) {
  // struct {int32 a; double b; int16 c[2]; char d;} x 3, packed.
  std::vector<std::byte> buf;
  for (int i = 0; i < 3; ++i) {
    put_foreign<std::int32_t>(buf, -i - 1);
    put_foreign<double>(buf, i + 0.5);
    put_foreign<std::int16_t>(buf, static_cast<std::int16_t>(100 + i));
    put_foreign<std::int16_t>(buf, static_cast<std::int16_t>(-100 - i));
    buf.push_back(static_cast<std::byte>('a' + i));
  }
  const SignatureRun sig[] = {{4, 1}, {8, 1}, {2, 2}, {1, 1}};
  swap_elements(buf, sig);
  for (int i = 0; i < 3; ++i) {
    const std::size_t base = static_cast<std::size_t>(i) * 17;
    EXPECT_EQ(get_native<std::int32_t>(buf, base), -i - 1);
    EXPECT_EQ(get_native<double>(buf, base + 4), i + 0.5);
    EXPECT_EQ(get_native<std::int16_t>(buf, base + 12), 100 + i);
    EXPECT_EQ(get_native<std::int16_t>(buf, base + 14), -100 - i);
    EXPECT_EQ(buf[base + 16], static_cast<std::byte>('a' + i));
  }
}

TEST(SwapElements, PartialDatatypeAtEnd) {
  // Two whole {int; double} plus one int: a receive that stopped mid-type.
  std::vector<std::byte> buf;
  put_foreign<std::int32_t>(buf, 1);
  put_foreign<double>(buf, 2.0);
  put_foreign<std::int32_t>(buf, 3);
  put_foreign<double>(buf, 4.0);
  put_foreign<std::int32_t>(buf, 5);
  const SignatureRun sig[] = {{4, 1}, {8, 1}};
  swap_elements(buf, sig);
  EXPECT_EQ(get_native<std::int32_t>(buf, 24), 5);
  EXPECT_EQ(get_native<double>(buf, 16), 4.0);
}

TEST(SwapElements, SixteenByteElementsReverseFully) {
  std::vector<std::byte> buf(32);
  for (std::size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<std::byte>(i);
  const SignatureRun sig[] = {{16, 2}};
  swap_elements(buf, sig);
  for (std::size_t i = 0; i < 16; ++i) {
    EXPECT_EQ(buf[i], static_cast<std::byte>(15 - i));
    EXPECT_EQ(buf[16 + i], static_cast<std::byte>(31 - i));
  }
}

TEST(SwapElements, SwappingTwiceRestores) {
  std::vector<std::byte> buf(8 * 1000 + 4 * 1000);
  for (std::size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<std::byte>(i * 7);
  const auto original = buf;
  const SignatureRun sig[] = {{8, 10}, {4, 10}};
  swap_elements(buf, sig);
  EXPECT_NE(buf, original);
  swap_elements(buf, sig);
  EXPECT_EQ(buf, original);
}

TEST(SwapElements, RejectsBadInput) {
  std::vector<std::byte> buf(12);
  const SignatureRun odd[] = {{3, 4}};
  EXPECT_THROW(swap_elements(buf, odd), Error);
  const SignatureRun none[] = {{8, 0}};
  EXPECT_THROW(swap_elements(buf, none), Error);
  EXPECT_THROW(swap_elements(buf, {}), Error);
  const SignatureRun eight[] = {{8, 5}};
  EXPECT_THROW(swap_elements(buf, eight), Error);  // 12 bytes end inside the second double
  const SignatureRun mixed[] = {{8, 1}, {2, 1}};
  EXPECT_THROW(swap_elements(buf, mixed), Error);  // 8 + 2 leaves 2 bytes of the next double
  swap_elements({}, none);                         // nothing to swap: fine
}

}  // namespace
}  // namespace encore
