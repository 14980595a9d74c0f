// What a few calls return outside their arguments, recorded as extras (format 1.1): the value
// behind a predefined attribute key (MPI_TAG_UB differs between MPI builds and launchers) and
// a distributed graph's neighbours (they follow from every rank's arguments, not this one's).
#include <vector>

#include "call.hpp"

namespace encore::dump {

using event_format::Extra;

bool predefined_attribute(int keyval) {
  // C keys are MPI_TAG_UB + 2i; the Fortran form of each is one more (MPICH's mpi.h).
  return keyval >= MPI_TAG_UB && keyval <= MPI_APPNUM + 1;
}

void Call::attribute_value(int keyval, std::int64_t value) {
  if (!predefined_attribute(keyval)) return;
  begin_extra(Extra::attribute);
  put_int(value);
}

void Call::attribute_value(int keyval, const void* attribute_val, int flag) {
  // For a predefined key MPI stores a pointer to its int into *attribute_val.
  if (!flag || !attribute_val) return;
  const int* p = *static_cast<const int* const*>(attribute_val);
  if (p) attribute_value(keyval, *p);
}

void Call::neighbours(MPI_Comm comm) {
  if (comm == MPI_COMM_NULL) return;
  mark_heavy();
  int in = 0, out = 0, weighted = 0;
  if (PMPI_Dist_graph_neighbors_count(comm, &in, &out, &weighted) != MPI_SUCCESS) return;
  // One element at least: MPI may check the arrays even when a degree is 0.
  std::vector<int> sources(in + 1), sw(in + 1), dests(out + 1), dw(out + 1);
  if (PMPI_Dist_graph_neighbors(comm, in, sources.data(), weighted ? sw.data() : MPI_UNWEIGHTED,
                                out, dests.data(),
                                weighted ? dw.data() : MPI_UNWEIGHTED) != MPI_SUCCESS)
    return;
  begin_extra(Extra::neighbours);
  put_uint(weighted ? event_format::kNeighboursWeighted : 0);
  const auto side = [&](int n, const std::vector<int>& ranks, const std::vector<int>& weights) {
    put_uint(static_cast<std::uint64_t>(n));
    for (int i = 0; i < n; ++i) put_int(ranks[static_cast<std::size_t>(i)]);
    for (int i = 0; weighted && i < n; ++i) put_int(weights[static_cast<std::size_t>(i)]);
  };
  side(in, sources, sw);
  side(out, dests, dw);
}

}  // namespace encore::dump
