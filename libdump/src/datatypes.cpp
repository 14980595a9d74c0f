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
    if (!out.empty() && out.back().elem_size == r.elem_size)
      out.back().repeat += r.repeat;
    else
      out.push_back(r);
    return;
  }
  for (std::uint64_t t = 0; t < times && out.size() <= kMaxSignatureRuns; ++t) {
    for (const auto& r : part) {
      if (!out.empty() && out.back().elem_size == r.elem_size)
        out.back().repeat += r.repeat;
      else
        out.push_back(r);
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
      {MPI_FLOAT_INT, 4, 4},
      {MPI_DOUBLE_INT, 8, 4},
      {MPI_LONG_INT, 8, 4},
      {MPI_SHORT_INT, 2, 4},
      {MPI_2INT, 4, 4},
      {MPI_LONG_DOUBLE_INT, 16, 4},
      {MPI_C_FLOAT_COMPLEX, 4, 4},
      {MPI_C_DOUBLE_COMPLEX, 8, 8},
      {MPI_C_LONG_DOUBLE_COMPLEX, 16, 16},
      {MPI_COMPLEX, 4, 4},
      {MPI_DOUBLE_COMPLEX, 8, 8},
      {MPI_2REAL, 4, 4},
      {MPI_2DOUBLE_PRECISION, 8, 8},
      {MPI_2INTEGER, 4, 4},
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

// The MPI-4 envelope and contents: the MPI-3 calls refuse types built by the large-count
// (`_c`) constructors, whose counts come back in `counts` instead of `ints`.
struct Contents {
  int combiner = MPI_COMBINER_NAMED;
  std::vector<int> ints;
  std::vector<MPI_Aint> addrs;
  std::vector<MPI_Count> counts;
  std::vector<MPI_Datatype> types;
};

bool get_contents(MPI_Datatype dt, Contents& c) {
  MPI_Count ni = 0, na = 0, nc = 0, nd = 0;
  if (PMPI_Type_get_envelope_c(dt, &ni, &na, &nc, &nd, &c.combiner) != MPI_SUCCESS) return false;
  if (c.combiner == MPI_COMBINER_NAMED) return true;
  c.ints.resize(static_cast<std::size_t>(ni));
  c.addrs.resize(static_cast<std::size_t>(na));
  c.counts.resize(static_cast<std::size_t>(nc));
  c.types.resize(static_cast<std::size_t>(nd));
  return PMPI_Type_get_contents_c(dt, ni, na, nc, nd, c.ints.data(), c.addrs.data(),
                                  c.counts.data(), c.types.data()) == MPI_SUCCESS;
}

bool is_named(MPI_Datatype dt) {
  MPI_Count ni = 0, na = 0, nc = 0, nd = 0;
  int combiner = MPI_COMBINER_NAMED;
  PMPI_Type_get_envelope_c(dt, &ni, &na, &nc, &nd, &combiner);
  return combiner == MPI_COMBINER_NAMED;
}

std::uint64_t u(std::int64_t v) { return static_cast<std::uint64_t>(v < 0 ? 0 : v); }

}  // namespace

std::vector<SignatureRun> type_signature(MPI_Datatype dt) {
  Contents c;
  if (!get_contents(dt, c)) return {};
  if (c.combiner == MPI_COMBINER_NAMED) return named_signature(dt);
  std::vector<Runs> parts;
  for (MPI_Datatype t : c.types) parts.push_back(type_signature(t));
  for (MPI_Datatype t : c.types)
    if (!is_named(t)) PMPI_Type_free(&t);
  if (parts.empty()) return {};
  // A large-count constructor keeps in `counts` what the int form keeps in `ints`, at the same
  // places (MPI-4.0 section 5.1.13), except subarray's and darray's leading ints.
  const bool large = !c.counts.empty();
  const auto n = large ? c.counts.size() : c.ints.size();
  const auto at = [&](std::size_t i) -> std::uint64_t {
    if (i >= n) return 0;
    return large ? u(c.counts[i]) : u(c.ints[i]);
  };
  Runs out;
  switch (c.combiner) {
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_RESIZED:
      return parts[0];
    case MPI_COMBINER_CONTIGUOUS:
      append(out, parts[0], at(0));
      break;
    case MPI_COMBINER_VECTOR:
    case MPI_COMBINER_HVECTOR:
    case MPI_COMBINER_INDEXED_BLOCK:
    case MPI_COMBINER_HINDEXED_BLOCK:
      append(out, parts[0], at(0) * at(1));
      break;
    case MPI_COMBINER_INDEXED:
    case MPI_COMBINER_HINDEXED: {
      std::uint64_t sum = 0;
      for (std::size_t i = 0; i < at(0); ++i) sum += at(1 + i);
      append(out, parts[0], sum);
      break;
    }
    case MPI_COMBINER_STRUCT:
      for (std::size_t i = 0; i < parts.size(); ++i) append(out, parts[i], at(1 + i));
      break;
    case MPI_COMBINER_SUBARRAY: {
      // ints[0] is ndims in both forms; subsizes follow the sizes.
      const std::size_t ndims = c.ints.empty() ? 0 : u(c.ints[0]);
      std::uint64_t elems = 1;
      for (std::size_t i = 0; i < ndims; ++i) elems *= large ? at(ndims + i) : at(1 + ndims + i);
      append(out, parts[0], elems);
      break;
    }
    default: {
      // darray, f90 types and anything newer: derive the element count from the sizes.
      MPI_Count size = 0;
      std::uint64_t old = 0;
      PMPI_Type_size_c(dt, &size);
      for (const auto& r : parts[0]) old += std::uint64_t{r.elem_size} * r.repeat;
      if (old == 0 || u(size) % old) return {};
      append(out, parts[0], u(size) / old);
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
