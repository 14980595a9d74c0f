#include "large_count.hpp"

#include <limits>
#include <string>
#include <vector>

#include "datatype_error.hpp"

namespace encore::replay::large {
namespace {

int narrow(MPI_Count v, const char* what) {
  if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max())
    throw DatatypeError(std::string("large-count constructor: ") + what + " = " +
                        std::to_string(v) + " does not fit in an int, which the replay's " +
                        "datatype engine needs");
  return static_cast<int>(v);
}

std::vector<int> narrow_all(const MPI_Count* p, MPI_Count n, const char* what) {
  std::vector<int> out;
  if (n <= 0) return out;
  out.reserve(static_cast<std::size_t>(n));
  for (MPI_Count i = 0; i < n; ++i) out.push_back(narrow(p[i], what));
  return out;
}

// MPI_Aint and MPI_Count are both 64-bit here; copied anyway so the engine sees its own type.
std::vector<MPI_Aint> addresses(const MPI_Count* p, MPI_Count n) {
  std::vector<MPI_Aint> out;
  for (MPI_Count i = 0; i < n; ++i) out.push_back(static_cast<MPI_Aint>(p[i]));
  return out;
}

}  // namespace

MPI_Datatype contiguous(TypeEngine& e, MPI_Count count, MPI_Datatype oldtype) {
  return e.contiguous(narrow(count, "count"), oldtype);
}

MPI_Datatype vector(TypeEngine& e, MPI_Count count, MPI_Count blocklength, MPI_Count stride,
                    MPI_Datatype oldtype) {
  return e.vector(narrow(count, "count"), narrow(blocklength, "blocklength"),
                  narrow(stride, "stride"), oldtype);
}

MPI_Datatype hvector(TypeEngine& e, MPI_Count count, MPI_Count blocklength, MPI_Count stride,
                     MPI_Datatype oldtype) {
  return e.hvector(narrow(count, "count"), narrow(blocklength, "blocklength"),
                   static_cast<MPI_Aint>(stride), oldtype);
}

MPI_Datatype indexed(TypeEngine& e, MPI_Count count, const MPI_Count* blocklengths,
                     const MPI_Count* displacements, MPI_Datatype oldtype) {
  const int n = narrow(count, "count");
  const auto bl = narrow_all(blocklengths, n, "array_of_blocklengths[i]");
  const auto d = narrow_all(displacements, n, "array_of_displacements[i]");
  return e.indexed(n, bl.data(), d.data(), oldtype);
}

MPI_Datatype hindexed(TypeEngine& e, MPI_Count count, const MPI_Count* blocklengths,
                      const MPI_Count* displacements, MPI_Datatype oldtype) {
  const int n = narrow(count, "count");
  const auto bl = narrow_all(blocklengths, n, "array_of_blocklengths[i]");
  const auto d = addresses(displacements, n);
  return e.hindexed(n, bl.data(), d.data(), oldtype);
}

MPI_Datatype indexed_block(TypeEngine& e, MPI_Count count, MPI_Count blocklength,
                           const MPI_Count* displacements, MPI_Datatype oldtype) {
  const int n = narrow(count, "count");
  const auto d = narrow_all(displacements, n, "array_of_displacements[i]");
  return e.indexed_block(n, narrow(blocklength, "blocklength"), d.data(), oldtype);
}

MPI_Datatype hindexed_block(TypeEngine& e, MPI_Count count, MPI_Count blocklength,
                            const MPI_Count* displacements, MPI_Datatype oldtype) {
  const int n = narrow(count, "count");
  const auto d = addresses(displacements, n);
  return e.hindexed_block(n, narrow(blocklength, "blocklength"), d.data(), oldtype);
}

MPI_Datatype create_struct(TypeEngine& e, MPI_Count count, const MPI_Count* blocklengths,
                           const MPI_Count* displacements, const MPI_Datatype* types) {
  const int n = narrow(count, "count");
  const auto bl = narrow_all(blocklengths, n, "array_of_blocklengths[i]");
  const auto d = addresses(displacements, n);
  return e.create_struct(n, bl.data(), d.data(), types);
}

MPI_Datatype subarray(TypeEngine& e, int ndims, const MPI_Count* sizes, const MPI_Count* subsizes,
                      const MPI_Count* starts, int order, MPI_Datatype oldtype) {
  const auto sz = narrow_all(sizes, ndims, "array_of_sizes[i]");
  const auto sub = narrow_all(subsizes, ndims, "array_of_subsizes[i]");
  const auto st = narrow_all(starts, ndims, "array_of_starts[i]");
  return e.subarray(ndims, sz.data(), sub.data(), st.data(), order, oldtype);
}

MPI_Datatype darray(TypeEngine& e, int size, int rank, int ndims, const MPI_Count* gsizes,
                    const int* distribs, const int* dargs, const int* psizes, int order,
                    MPI_Datatype oldtype) {
  const auto g = narrow_all(gsizes, ndims, "array_of_gsizes[i]");
  return e.darray(size, rank, ndims, g.data(), distribs, dargs, psizes, order, oldtype);
}

MPI_Datatype resized(TypeEngine& e, MPI_Datatype oldtype, MPI_Count lb, MPI_Count extent) {
  return e.resized(oldtype, static_cast<MPI_Aint>(lb), static_cast<MPI_Aint>(extent));
}

}  // namespace encore::replay::large
