#include "predefined.hpp"

#include <algorithm>
#include <array>
#include <initializer_list>

namespace encore::replay {
namespace {

constexpr MPI_Datatype kNone = MPI_DATATYPE_NULL;

// An ordinary basic type: one element of `size` bytes.
constexpr Predefined basic(MPI_Datatype h, const char* name, int size, int align, int ext,
                           Ext32 how) {
  return {h, name, size, size, size, align, {h, kNone}, {0, 0}, ext, how};
}

// A value/index pair or MPI_2INT-like type: two basic parts at the offsets MPICH uses (those
// of a C struct {a; b;}), extent padded to the struct's alignment.
constexpr Predefined pair(MPI_Datatype h, const char* name, MPI_Datatype a, int a_size,
                          MPI_Datatype b, int b_off, int b_size, int extent, int align) {
  return {h,     name,   a_size + b_size, extent, b_off + b_size,
          align, {a, b}, {0, b_off},      0,      Ext32::unsupported};
}

// Alignments are MPICH's (MPIR_Datatype_builtintype_alignment on this build), measured:
// REAL16, COMPLEX32 and MPIX_C_FLOAT16 get 1.
const std::array kTable = {
    basic(MPI_CHAR, "MPI_CHAR", 1, 1, 1, Ext32::copy),
    basic(MPI_SIGNED_CHAR, "MPI_SIGNED_CHAR", 1, 1, 1, Ext32::copy),
    basic(MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR", 1, 1, 1, Ext32::copy),
    basic(MPI_BYTE, "MPI_BYTE", 1, 1, 1, Ext32::copy),
    basic(MPI_WCHAR, "MPI_WCHAR", 4, 4, 2, Ext32::unsigned_int),
    basic(MPI_SHORT, "MPI_SHORT", 2, 2, 2, Ext32::swap),
    basic(MPI_UNSIGNED_SHORT, "MPI_UNSIGNED_SHORT", 2, 2, 2, Ext32::swap),
    basic(MPI_INT, "MPI_INT", 4, 4, 4, Ext32::swap),
    basic(MPI_UNSIGNED, "MPI_UNSIGNED", 4, 4, 4, Ext32::swap),
    basic(MPI_LONG, "MPI_LONG", 8, 8, 4, Ext32::signed_int),
    basic(MPI_UNSIGNED_LONG, "MPI_UNSIGNED_LONG", 8, 8, 4, Ext32::unsigned_int),
    basic(MPI_FLOAT, "MPI_FLOAT", 4, 4, 4, Ext32::swap),
    basic(MPI_DOUBLE, "MPI_DOUBLE", 8, 8, 8, Ext32::swap),
    basic(MPI_LONG_DOUBLE, "MPI_LONG_DOUBLE", 16, 16, 16, Ext32::long_double),
    basic(MPI_LONG_LONG_INT, "MPI_LONG_LONG_INT", 8, 8, 8, Ext32::swap),
    basic(MPI_UNSIGNED_LONG_LONG, "MPI_UNSIGNED_LONG_LONG", 8, 8, 8, Ext32::swap),
    basic(MPI_PACKED, "MPI_PACKED", 1, 1, 1, Ext32::copy),
    // Markers of the MPI-1 struct API: no data; a struct uses them to set its bounds.
    basic(MPI_LB, "MPI_LB", 0, 1, 0, Ext32::unsupported),
    basic(MPI_UB, "MPI_UB", 0, 1, 0, Ext32::unsupported),
    pair(MPI_FLOAT_INT, "MPI_FLOAT_INT", MPI_FLOAT, 4, MPI_INT, 4, 4, 8, 4),
    pair(MPI_DOUBLE_INT, "MPI_DOUBLE_INT", MPI_DOUBLE, 8, MPI_INT, 8, 4, 16, 8),
    pair(MPI_LONG_INT, "MPI_LONG_INT", MPI_LONG, 8, MPI_INT, 8, 4, 16, 8),
    pair(MPI_SHORT_INT, "MPI_SHORT_INT", MPI_SHORT, 2, MPI_INT, 4, 4, 8, 4),
    pair(MPI_2INT, "MPI_2INT", MPI_INT, 4, MPI_INT, 4, 4, 8, 4),
    pair(MPI_LONG_DOUBLE_INT, "MPI_LONG_DOUBLE_INT", MPI_LONG_DOUBLE, 16, MPI_INT, 16, 4, 32, 16),
    basic(MPI_COMPLEX, "MPI_COMPLEX", 8, 4, 8, Ext32::swap_halves),
    basic(MPI_DOUBLE_COMPLEX, "MPI_DOUBLE_COMPLEX", 16, 8, 16, Ext32::swap_halves),
    basic(MPI_LOGICAL, "MPI_LOGICAL", 4, 4, 4, Ext32::swap),
    basic(MPI_REAL, "MPI_REAL", 4, 4, 4, Ext32::swap),
    basic(MPI_DOUBLE_PRECISION, "MPI_DOUBLE_PRECISION", 8, 8, 8, Ext32::swap),
    basic(MPI_INTEGER, "MPI_INTEGER", 4, 4, 4, Ext32::swap),
    pair(MPI_2INTEGER, "MPI_2INTEGER", MPI_INTEGER, 4, MPI_INTEGER, 4, 4, 8, 4),
    pair(MPI_2REAL, "MPI_2REAL", MPI_REAL, 4, MPI_REAL, 4, 4, 8, 4),
    pair(MPI_2DOUBLE_PRECISION, "MPI_2DOUBLE_PRECISION", MPI_DOUBLE_PRECISION, 8,
         MPI_DOUBLE_PRECISION, 8, 8, 16, 8),
    basic(MPI_CHARACTER, "MPI_CHARACTER", 1, 1, 1, Ext32::copy),
    basic(MPI_REAL4, "MPI_REAL4", 4, 4, 4, Ext32::swap),
    basic(MPI_REAL8, "MPI_REAL8", 8, 8, 8, Ext32::swap),
    // gfortran's REAL*16 is IEEE binary128 already: a plain byte swap.
    basic(MPI_REAL16, "MPI_REAL16", 16, 1, 16, Ext32::swap),
    basic(MPI_COMPLEX8, "MPI_COMPLEX8", 8, 4, 8, Ext32::swap_halves),
    basic(MPI_COMPLEX16, "MPI_COMPLEX16", 16, 8, 16, Ext32::swap_halves),
    basic(MPI_COMPLEX32, "MPI_COMPLEX32", 32, 1, 32, Ext32::swap_halves),
    basic(MPI_INTEGER1, "MPI_INTEGER1", 1, 1, 1, Ext32::copy),
    basic(MPI_INTEGER2, "MPI_INTEGER2", 2, 2, 2, Ext32::swap),
    basic(MPI_INTEGER4, "MPI_INTEGER4", 4, 4, 4, Ext32::swap),
    basic(MPI_INTEGER8, "MPI_INTEGER8", 8, 8, 8, Ext32::swap),
    basic(MPI_INT8_T, "MPI_INT8_T", 1, 1, 1, Ext32::copy),
    basic(MPI_INT16_T, "MPI_INT16_T", 2, 2, 2, Ext32::swap),
    basic(MPI_INT32_T, "MPI_INT32_T", 4, 4, 4, Ext32::swap),
    basic(MPI_INT64_T, "MPI_INT64_T", 8, 8, 8, Ext32::swap),
    basic(MPI_UINT8_T, "MPI_UINT8_T", 1, 1, 1, Ext32::copy),
    basic(MPI_UINT16_T, "MPI_UINT16_T", 2, 2, 2, Ext32::swap),
    basic(MPI_UINT32_T, "MPI_UINT32_T", 4, 4, 4, Ext32::swap),
    basic(MPI_UINT64_T, "MPI_UINT64_T", 8, 8, 8, Ext32::swap),
    basic(MPI_C_BOOL, "MPI_C_BOOL", 1, 1, 1, Ext32::copy),
    basic(MPI_C_FLOAT_COMPLEX, "MPI_C_FLOAT_COMPLEX", 8, 4, 8, Ext32::swap_halves),
    basic(MPI_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX", 16, 8, 16, Ext32::swap_halves),
    basic(MPI_C_LONG_DOUBLE_COMPLEX, "MPI_C_LONG_DOUBLE_COMPLEX", 32, 16, 32,
          Ext32::long_double_cx),
    basic(MPIX_C_FLOAT16, "MPIX_C_FLOAT16", 2, 1, 0, Ext32::unsupported),
    basic(MPI_AINT, "MPI_AINT", 8, 8, 8, Ext32::swap),
    basic(MPI_OFFSET, "MPI_OFFSET", 8, 8, 8, Ext32::swap),
    basic(MPI_COUNT, "MPI_COUNT", 8, 8, 8, Ext32::swap),
    basic(MPI_CXX_BOOL, "MPI_CXX_BOOL", 1, 1, 1, Ext32::copy),
    basic(MPI_CXX_FLOAT_COMPLEX, "MPI_CXX_FLOAT_COMPLEX", 8, 4, 8, Ext32::swap_halves),
    basic(MPI_CXX_DOUBLE_COMPLEX, "MPI_CXX_DOUBLE_COMPLEX", 16, 8, 16, Ext32::swap_halves),
    basic(MPI_CXX_LONG_DOUBLE_COMPLEX, "MPI_CXX_LONG_DOUBLE_COMPLEX", 32, 16, 32,
          Ext32::long_double_cx),
};

}  // namespace

const Predefined* find_predefined(MPI_Datatype handle) noexcept {
  // ~65 entries, looked up once per handle by the engine: a linear search is enough.
  const auto* it = std::find_if(kTable.begin(), kTable.end(),
                                [&](const Predefined& p) { return p.handle == handle; });
  return it == kTable.end() ? nullptr : &*it;
}

MPI_Datatype yaksa_representative(MPI_Datatype h) noexcept {
  // MPII_Typerep_get_yaksa_type (MPICH typerep_yaksa_init.c) maps MPI types to yaksa types,
  // and yaksa_init.c makes all integers of one size one object (x86-64 sizes).
  static const std::initializer_list<MPI_Datatype> kGroups[] = {
      {MPI_INT8_T, MPI_CHAR, MPI_SIGNED_CHAR, MPI_UNSIGNED_CHAR, MPI_BYTE, MPI_PACKED, MPI_UINT8_T,
       MPI_C_BOOL, MPI_CHARACTER, MPI_INTEGER1, MPI_CXX_BOOL},
      {MPI_INT16_T, MPI_SHORT, MPI_UNSIGNED_SHORT, MPI_UINT16_T, MPI_INTEGER2},
      {MPI_INT32_T, MPI_INT, MPI_UNSIGNED, MPI_UINT32_T, MPI_LOGICAL, MPI_INTEGER, MPI_INTEGER4},
      {MPI_INT64_T, MPI_LONG, MPI_UNSIGNED_LONG, MPI_LONG_LONG_INT, MPI_UNSIGNED_LONG_LONG,
       MPI_UINT64_T, MPI_AINT, MPI_OFFSET, MPI_COUNT, MPI_INTEGER8},
      {MPI_FLOAT, MPI_REAL, MPI_REAL4},
      {MPI_DOUBLE, MPI_DOUBLE_PRECISION, MPI_REAL8},
      {MPI_C_FLOAT_COMPLEX, MPI_COMPLEX, MPI_COMPLEX8, MPI_CXX_FLOAT_COMPLEX, MPI_2REAL},
      {MPI_C_DOUBLE_COMPLEX, MPI_DOUBLE_COMPLEX, MPI_COMPLEX16, MPI_CXX_DOUBLE_COMPLEX,
       MPI_2DOUBLE_PRECISION},
      {MPI_C_LONG_DOUBLE_COMPLEX, MPI_CXX_LONG_DOUBLE_COMPLEX},
      {MPI_2INT, MPI_2INTEGER},
  };
  for (const auto& group : kGroups)
    for (MPI_Datatype t : group)
      if (t == h) return *group.begin();
  return h;
}

const Predefined* predefined_begin() noexcept { return kTable.data(); }
const Predefined* predefined_end() noexcept { return kTable.data() + kTable.size(); }

}  // namespace encore::replay
