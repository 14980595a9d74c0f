#include "external32.hpp"

#include <bit>
#include <cfloat>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "datatype_error.hpp"
#include "predefined.hpp"

namespace encore::replay {
namespace {

using U64 = std::uint64_t;

// Native integers of 1..8 bytes <-> uint64 (the host is little- or big-endian).
U64 load_native(const std::byte* p, int size) {
  U64 v = 0;
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(&v, p, static_cast<std::size_t>(size));
  } else {
    for (int i = 0; i < size; ++i) v = (v << 8) | static_cast<U64>(p[i]);
  }
  return v;
}
void store_native(std::byte* p, U64 v, int size) {
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(p, &v, static_cast<std::size_t>(size));
  } else {
    for (int i = size - 1; i >= 0; --i, v >>= 8) p[i] = static_cast<std::byte>(v & 0xff);
  }
}
U64 load_be(const std::byte* p, int size) {
  U64 v = 0;
  for (int i = 0; i < size; ++i) v = (v << 8) | static_cast<U64>(p[i]);
  return v;
}
void store_be(std::byte* p, U64 v, int size) {
  for (int i = size - 1; i >= 0; --i, v >>= 8) p[i] = static_cast<std::byte>(v & 0xff);
}

// Big-endian is native order reversed on a little-endian host; the same in both directions.
void to_big_endian(const std::byte* in, std::byte* out, int size) {
  if constexpr (std::endian::native == std::endian::little) {
    for (int i = 0; i < size; ++i) out[i] = in[size - 1 - i];
  } else {
    std::memcpy(out, in, static_cast<std::size_t>(size));
  }
}

[[noreturn]] void conversion_error(const Predefined& p) {
  throw DatatypeError(std::string("external32: a value of ") + p.name +
                      " does not fit in its external32 size");
}

// x87 extended precision (as stored by gcc on x86: 64-bit significand with explicit integer
// bit, then sign and 15-bit exponent) <-> IEEE binary128, big-endian. Same exponent bias.
void x87_to_quad(const std::byte* in, std::byte* out) {
  const U64 mant = load_native(in, 8);
  const U64 se = load_native(in + 8, 2);
  const U64 frac63 = mant & ~(U64{1} << 63);  // drop the explicit integer bit
  store_be(out, (se << 48) | (frac63 >> 15), 8);
  store_be(out + 8, frac63 << 49, 8);
}
void quad_to_x87(const std::byte* in, std::byte* out) {
  const U64 hi = load_be(in, 8), lo = load_be(in + 8, 8);
  const U64 se = hi >> 48, exp = se & 0x7fff;
  U64 mant = ((hi & ((U64{1} << 48) - 1)) << 15) | (lo >> 49);
  if (exp != 0) mant |= U64{1} << 63;  // normal numbers, inf and NaN carry the integer bit
  std::memset(out, 0, 16);
  store_native(out, mant, 8);
  store_native(out + 8, se, 2);
}

// One run of `n` basic elements of type `p`, native -> external32 or back.
void convert_run(const Predefined& p, U64 n, const std::byte*& in, std::byte*& out,
                 bool to_external) {
  const int native = p.size, ext = p.ext32_size;
  const int in_size = to_external ? native : ext, out_size = to_external ? ext : native;
  for (U64 k = 0; k < n; ++k, in += in_size, out += out_size) {
    switch (p.ext32) {
      case Ext32::copy:
        std::memcpy(out, in, static_cast<std::size_t>(native));
        break;
      case Ext32::swap:
        to_big_endian(in, out, native);
        break;
      case Ext32::swap_halves:
        to_big_endian(in, out, native / 2);
        to_big_endian(in + native / 2, out + native / 2, native / 2);
        break;
      case Ext32::signed_int:
      case Ext32::unsigned_int: {
        const bool is_signed = p.ext32 == Ext32::signed_int;
        const int bits = 8 * ext;
        if (to_external) {
          const U64 v = load_native(in, native);
          bool fits = false;
          if (is_signed) {  // sign-extend the native value, then range-check
            const int pad = 64 - 8 * native;
            const auto sv = static_cast<std::int64_t>(v << pad) >> pad;
            const std::int64_t lim = std::int64_t{1} << (bits - 1);
            fits = sv >= -lim && sv < lim;
          } else {
            fits = v < (U64{1} << bits);
          }
          if (!fits) conversion_error(p);
          store_be(out, v, ext);
        } else {
          U64 v = load_be(in, ext);
          if (is_signed && (v >> (bits - 1))) v |= ~U64{0} << bits;
          store_native(out, v, native);
        }
        break;
      }
      case Ext32::long_double:
      case Ext32::long_double_cx: {
        static_assert(LDBL_MANT_DIG == 64, "long double is assumed to be x87 extended");
        for (std::ptrdiff_t half = 0; half < native / 16; ++half) {
          if (to_external)
            x87_to_quad(in + 16 * half, out + 16 * half);
          else
            quad_to_x87(in + 16 * half, out + 16 * half);
        }
        break;
      }
      case Ext32::unsupported:
        throw DatatypeError(std::string("external32: ") + p.name + " is not supported");
    }
  }
}

void convert(const Signature& s, MPI_Count count, const std::byte* in, std::byte* out,
             bool to_external) {
  if (count < 0) throw DatatypeError("external32: negative count");
  auto f = [&](MPI_Datatype basic, U64 n) {
    convert_run(*find_predefined(basic), n, in, out, to_external);
  };
  for_each_basic(s, static_cast<U64>(count), f);
}

MPI_Count ext_size(const SigNode& s) {
  MPI_Count n = 0;
  for (const SigItem& it : s.items) {
    MPI_Count unit = 0;
    if (it.sub) {
      unit = ext_size(*it.sub);
    } else {
      const Predefined* p = find_predefined(it.basic);
      if (p->ext32 == Ext32::unsupported)
        throw DatatypeError(std::string("external32: ") + p->name + " is not supported");
      unit = p->ext32_size;
    }
    n += unit * static_cast<MPI_Count>(it.repeat);
  }
  return n;
}

}  // namespace

MPI_Count external32_size(const Signature& s) { return s ? ext_size(*s) : 0; }

void native_to_external32(const Signature& s, MPI_Count count, const std::byte* native,
                          std::byte* external) {
  convert(s, count, native, external, true);
}

void external32_to_native(const Signature& s, MPI_Count count, const std::byte* external,
                          std::byte* native) {
  convert(s, count, external, native, false);
}

}  // namespace encore::replay
