#include "datatypes.hpp"

#include <numeric>
#include <string_view>

namespace encore::dump {
namespace {

constexpr std::size_t kMaxSignatureRuns = 4096;

using Runs = std::vector<SignatureRun>;

void append(Runs& out, const Runs& part, std::uint64_t times) {
  if (times == 0 || part.empty()) return;
  if (part.size() == 1) {
    const SignatureRun r{part[0].elem_size, part[0].repeat * times};
    if (!out.empty() && out.back().elem_size == r.elem_size) out.back().repeat += r.repeat;
    else out.push_back(r);
    return;
  }
  for (std::uint64_t t = 0; t < times && out.size() <= kMaxSignatureRuns; ++t) {
    for (const auto& r : part) {
      if (!out.empty() && out.back().elem_size == r.elem_size) out.back().repeat += r.repeat;
      else out.push_back(r);
    }
  }
}

// Predefined types that hold more than one element: pairs for MINLOC/MAXLOC and complexes.
Runs named_signature(MPI_Datatype dt) {
  struct Pair {
    MPI_Datatype type;
    std::uint32_t a, b;
  };
  static const Pair pairs[] = {
      {MPI_FLOAT_INT, 4, 4}, {MPI_DOUBLE_INT, 8, 4}, {MPI_LONG_INT, 8, 4},
      {MPI_SHORT_INT, 2, 4}, {MPI_2INT, 4, 4},       {MPI_LONG_DOUBLE_INT, 16, 4},
      {MPI_C_FLOAT_COMPLEX, 4, 4}, {MPI_C_DOUBLE_COMPLEX, 8, 8},
      {MPI_C_LONG_DOUBLE_COMPLEX, 16, 16}, {MPI_COMPLEX, 4, 4}, {MPI_DOUBLE_COMPLEX, 8, 8},
      {MPI_2REAL, 4, 4}, {MPI_2DOUBLE_PRECISION, 8, 8}, {MPI_2INTEGER, 4, 4},
  };
  for (const auto& p : pairs) {
    if (p.type == dt) {
      if (p.a == p.b) return {{p.a, 2}};
      return {{p.a, 1}, {p.b, 1}};
    }
  }
  int size = 0;
  PMPI_Type_size(dt, &size);
  if (size <= 0) return {};
  return {{static_cast<std::uint32_t>(size), 1}};
}

}  // namespace

std::vector<SignatureRun> type_signature(MPI_Datatype dt) {
  int ni = 0, na = 0, nd = 0, combiner = 0;
  if (PMPI_Type_get_envelope(dt, &ni, &na, &nd, &combiner) != MPI_SUCCESS) return {};
  if (combiner == MPI_COMBINER_NAMED) return named_signature(dt);
  std::vector<int> ints(static_cast<std::size_t>(ni));
  std::vector<MPI_Aint> addrs(static_cast<std::size_t>(na));
  std::vector<MPI_Datatype> types(static_cast<std::size_t>(nd));
  if (PMPI_Type_get_contents(dt, ni, na, nd, ints.data(), addrs.data(), types.data()) !=
      MPI_SUCCESS)
    return {};
  std::vector<Runs> parts;
  for (MPI_Datatype t : types) parts.push_back(type_signature(t));
  for (MPI_Datatype t : types) {
    int i2 = 0, a2 = 0, d2 = 0, c2 = 0;
    PMPI_Type_get_envelope(t, &i2, &a2, &d2, &c2);
    if (c2 != MPI_COMBINER_NAMED) PMPI_Type_free(&t);
  }
  auto sum = [&](std::size_t from, std::size_t n) {
    std::uint64_t s = 0;
    for (std::size_t i = 0; i < n; ++i) s += static_cast<std::uint64_t>(ints[from + i]);
    return s;
  };
  Runs out;
  const auto u = [](int v) { return static_cast<std::uint64_t>(v < 0 ? 0 : v); };
  switch (combiner) {
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_RESIZED:
      return parts.empty() ? Runs{} : parts[0];
    case MPI_COMBINER_CONTIGUOUS:
      append(out, parts[0], u(ints[0]));
      break;
    case MPI_COMBINER_VECTOR:
    case MPI_COMBINER_HVECTOR:
    case MPI_COMBINER_INDEXED_BLOCK:
    case MPI_COMBINER_HINDEXED_BLOCK:
      append(out, parts[0], u(ints[0]) * u(ints[1]));
      break;
    case MPI_COMBINER_INDEXED:
    case MPI_COMBINER_HINDEXED:
      append(out, parts[0], sum(1, u(ints[0])));
      break;
    case MPI_COMBINER_STRUCT:
      for (std::size_t i = 0; i < parts.size(); ++i) append(out, parts[i], u(ints[1 + i]));
      break;
    case MPI_COMBINER_SUBARRAY: {
      const auto ndims = u(ints[0]);
      std::uint64_t n = 1;
      for (std::size_t i = 0; i < ndims; ++i) n *= u(ints[1 + ndims + i]);
      append(out, parts[0], n);
      break;
    }
    default: {
      // darray, f90 types and anything newer: derive the element count from the sizes.
      int size = 0, old = 0;
      PMPI_Type_size(dt, &size);
      if (parts.empty() || parts[0].empty()) return {};
      for (const auto& r : parts[0]) old += static_cast<int>(r.elem_size * r.repeat);
      if (old <= 0 || size % old) return {};
      append(out, parts[0], u(size / old));
    }
  }
  if (out.size() > kMaxSignatureRuns) return {};
  return out;
}

TypeInfo& Datatypes::info_slow(MPI_Datatype dt) {
  auto [it, fresh] = info_.try_emplace(dt);
  TypeInfo& t = it->second;
  recent_[HandleIds::slot(dt)] = {dt, &t};
  if (!fresh) return t;
  t.id = ids_.lookup(dt);
  MPI_Count size = 0;
  PMPI_Type_size_x(dt, &size);
  t.size = size;
  MPI_Aint lb = 0, true_extent = 0;
  PMPI_Type_get_extent(dt, &lb, &t.extent);
  PMPI_Type_get_true_extent(dt, &t.true_lb, &true_extent);
  t.contiguous = size == t.extent && size == true_extent;
  t.signature = type_signature(dt);
  return t;
}

}  // namespace encore::dump
