#include "local_reduction.hpp"

#include <algorithm>
#include <complex>
#include <cstdint>
#include <type_traits>

namespace encore::replay {

namespace {

// b = a op b, element by element (a: inbuf, b: inoutbuf). False: `op` is not defined on T.
template <class T>
bool numbers(MPI_Op op, const T* a, T* b, MPI_Count n) {
  const auto each = [&](auto f) {
    for (MPI_Count i = 0; i < n; ++i) b[i] = f(a[i], b[i]);
    return true;
  };
  if (op == MPI_SUM) return each([](T x, T y) { return static_cast<T>(x + y); });
  if (op == MPI_PROD) return each([](T x, T y) { return static_cast<T>(x * y); });
  if constexpr (std::is_arithmetic_v<T>) {
    if (op == MPI_MAX) return each([](T x, T y) { return std::max(x, y); });
    if (op == MPI_MIN) return each([](T x, T y) { return std::min(x, y); });
  }
  if constexpr (std::is_integral_v<T>) {
    if (op == MPI_BAND) return each([](T x, T y) { return static_cast<T>(x & y); });
    if (op == MPI_BOR) return each([](T x, T y) { return static_cast<T>(x | y); });
    if (op == MPI_BXOR) return each([](T x, T y) { return static_cast<T>(x ^ y); });
  }
  return false;
}

// MPI_LAND, MPI_LOR, MPI_LXOR on C's truth values (0 false, anything else true).
template <class T>
bool logical(MPI_Op op, const T* a, T* b, MPI_Count n) {
  const auto each = [&](auto f) {
    for (MPI_Count i = 0; i < n; ++i) b[i] = static_cast<T>(f(a[i] != T{}, b[i] != T{}));
    return true;
  };
  if (op == MPI_LAND) return each([](bool x, bool y) { return x && y; });
  if (op == MPI_LOR) return each([](bool x, bool y) { return x || y; });
  if (op == MPI_LXOR) return each([](bool x, bool y) { return x != y; });
  return false;
}

template <class T>
bool integers(MPI_Op op, const T* a, T* b, MPI_Count n) {
  return numbers(op, a, b, n) || logical(op, a, b, n);
}

// MPI_MAXLOC and MPI_MINLOC on (value, index) pairs: the extreme value, and on a tie the
// smaller index.
template <class V, class I>
struct Pair {
  V value;
  I index;
};
template <class V, class I>
bool located(MPI_Op op, const Pair<V, I>* a, Pair<V, I>* b, MPI_Count n) {
  if (op != MPI_MAXLOC && op != MPI_MINLOC) return false;
  const bool max = op == MPI_MAXLOC;
  for (MPI_Count i = 0; i < n; ++i) {
    const Pair<V, I>& x = a[i];
    Pair<V, I>& y = b[i];
    if (x.value == y.value)
      y.index = std::min(x.index, y.index);
    else if (max ? x.value > y.value : x.value < y.value)
      y = x;
  }
  return true;
}

template <class T, class F>
bool as(F f, MPI_Op op, const void* a, void* b, MPI_Count n) {
  return f(op, static_cast<const T*>(a), static_cast<T*>(b), n);
}

// The predefined datatypes and what the predefined operations do on them.
bool predefined(MPI_Op op, const void* a, void* b, MPI_Count n, MPI_Datatype t) {
  const auto is = [t](std::initializer_list<MPI_Datatype> types) {
    return std::find(types.begin(), types.end(), t) != types.end();
  };
  // A type MPICH's build left out is MPI_DATATYPE_NULL and matches nothing here.
  if (t == MPI_DATATYPE_NULL) return false;
  if (is({MPI_INT, MPI_INTEGER, MPI_INTEGER4, MPI_INT32_T}))
    return as<std::int32_t>(integers<std::int32_t>, op, a, b, n);
  if (is({MPI_UNSIGNED, MPI_UINT32_T}))
    return as<std::uint32_t>(integers<std::uint32_t>, op, a, b, n);
  if (is({MPI_LONG, MPI_LONG_LONG, MPI_LONG_LONG_INT, MPI_INT64_T, MPI_INTEGER8, MPI_AINT,
          MPI_OFFSET, MPI_COUNT}))
    return as<std::int64_t>(integers<std::int64_t>, op, a, b, n);
  if (is({MPI_UNSIGNED_LONG, MPI_UNSIGNED_LONG_LONG, MPI_UINT64_T}))
    return as<std::uint64_t>(integers<std::uint64_t>, op, a, b, n);
  if (is({MPI_SHORT, MPI_INT16_T, MPI_INTEGER2}))
    return as<std::int16_t>(integers<std::int16_t>, op, a, b, n);
  if (is({MPI_UNSIGNED_SHORT, MPI_UINT16_T}))
    return as<std::uint16_t>(integers<std::uint16_t>, op, a, b, n);
  if (is({MPI_SIGNED_CHAR, MPI_CHAR, MPI_INT8_T, MPI_INTEGER1}))
    return as<std::int8_t>(integers<std::int8_t>, op, a, b, n);
  if (is({MPI_UNSIGNED_CHAR, MPI_UINT8_T}))
    return as<std::uint8_t>(integers<std::uint8_t>, op, a, b, n);
  if (is({MPI_BYTE}))  // the bitwise operations only
    return op != MPI_SUM && op != MPI_PROD && op != MPI_MAX && op != MPI_MIN &&
           as<std::uint8_t>(numbers<std::uint8_t>, op, a, b, n);
  if (is({MPI_FLOAT, MPI_REAL, MPI_REAL4})) return as<float>(numbers<float>, op, a, b, n);
  if (is({MPI_DOUBLE, MPI_DOUBLE_PRECISION, MPI_REAL8}))
    return as<double>(numbers<double>, op, a, b, n);
  if (is({MPI_LONG_DOUBLE})) return as<long double>(numbers<long double>, op, a, b, n);
  if (is({MPI_C_BOOL})) return as<bool>(logical<bool>, op, a, b, n);
  if (is({MPI_LOGICAL})) return as<std::int32_t>(logical<std::int32_t>, op, a, b, n);
  if (is({MPI_C_FLOAT_COMPLEX, MPI_C_COMPLEX, MPI_COMPLEX}))
    return as<std::complex<float>>(numbers<std::complex<float>>, op, a, b, n);
  if (is({MPI_C_DOUBLE_COMPLEX, MPI_DOUBLE_COMPLEX}))
    return as<std::complex<double>>(numbers<std::complex<double>>, op, a, b, n);
  if (is({MPI_C_LONG_DOUBLE_COMPLEX}))
    return as<std::complex<long double>>(numbers<std::complex<long double>>, op, a, b, n);
  if (is({MPI_2INT, MPI_2INTEGER})) return as<Pair<int, int>>(located<int, int>, op, a, b, n);
  if (is({MPI_FLOAT_INT})) return as<Pair<float, int>>(located<float, int>, op, a, b, n);
  if (is({MPI_DOUBLE_INT})) return as<Pair<double, int>>(located<double, int>, op, a, b, n);
  if (is({MPI_LONG_INT})) return as<Pair<long, int>>(located<long, int>, op, a, b, n);
  if (is({MPI_SHORT_INT})) return as<Pair<short, int>>(located<short, int>, op, a, b, n);
  if (is({MPI_LONG_DOUBLE_INT}))
    return as<Pair<long double, int>>(located<long double, int>, op, a, b, n);
  if (is({MPI_2REAL})) return as<Pair<float, float>>(located<float, float>, op, a, b, n);
  if (is({MPI_2DOUBLE_PRECISION}))
    return as<Pair<double, double>>(located<double, double>, op, a, b, n);
  return false;
}

}  // namespace

std::string reduce_local(const void* inbuf, void* inoutbuf, MPI_Count count, MPI_Datatype type,
                         MPI_Op op, const UserOp* user) {
  if (count <= 0) return {};
  if (user) {
    MPI_Datatype t = type;
    if (user->large) {
      MPI_Count len = count;
      reinterpret_cast<MPI_User_function_c*>(user->fn)(const_cast<void*>(inbuf), inoutbuf, &len,
                                                       &t);
    } else {
      int len = static_cast<int>(count);
      reinterpret_cast<MPI_User_function*>(user->fn)(const_cast<void*>(inbuf), inoutbuf, &len, &t);
    }
    return {};
  }
  if (predefined(op, inbuf, inoutbuf, count, type)) return {};
  return "MPI_Reduce_local is replayed with a user's operation, or a predefined one on the "
         "predefined datatype it is defined for; not this operation on this datatype (a derived "
         "datatype?)";
}

}  // namespace encore::replay
