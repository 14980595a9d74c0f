#include "recv_layout.hpp"

#include "call.hpp"

namespace encore::dump::layout {
namespace {

MPI_Aint extent_of(MPI_Datatype type) {
  MPI_Aint lb = 0, extent = 0;
  PMPI_Type_get_extent(type, &lb, &extent);
  return extent;
}

const void* offset(const void* base, MPI_Aint bytes) {
  return static_cast<const char*>(base) + bytes;
}

}  // namespace

RecvLayout whole(Call&, const void* buf, MPI_Count count, MPI_Datatype type) {
  if (buf == MPI_IN_PLACE) return {};
  return {{buf, count, type}};
}

RecvLayout exscan(Call& c, const void* buf, MPI_Count count, MPI_Datatype type, MPI_Comm comm) {
  if (c.recorder().comm(comm).rank == 0) return {};
  return whole(c, buf, count, type);
}

RecvLayout bcast(Call& c, const void* buf, MPI_Count count, MPI_Datatype type, int root,
                 MPI_Comm comm) {
  // The root sends; on an intercommunicator only the remote group receives.
  const CommInfo& info = c.recorder().comm(comm);
  const bool receives =
      info.inter ? (root != MPI_ROOT && root != MPI_PROC_NULL) : root != info.rank;
  if (!receives) return {};
  return {{buf, count, type}};
}

RecvLayout at_root(Call& c, const void* buf, MPI_Count count, MPI_Datatype type, int root,
                   MPI_Comm comm) {
  if (!c.is_root(root, comm)) return {};
  return {{buf, count, type}};
}

RecvLayout gather(Call& c, const void* buf, MPI_Count count, MPI_Datatype type, int root,
                  MPI_Comm comm) {
  if (!c.is_root(root, comm)) return {};
  return {{buf, count * c.recv_peers(comm, false), type}};
}

template <class C, class D>
RecvLayout gatherv(Call& c, const void* buf, const C* counts, const D* displs, MPI_Datatype type,
                   int root, MPI_Comm comm) {
  if (!c.is_root(root, comm)) return {};
  return blocks_v(c, buf, counts, displs, type, comm, false);
}

template <class C>
RecvLayout mine(Call& c, const void* buf, const C* counts, MPI_Datatype type, MPI_Comm comm) {
  const CommInfo& info = c.recorder().comm(comm);
  return {{buf, static_cast<MPI_Count>(counts[info.rank]), type}};
}

RecvLayout blocks(Call& c, const void* buf, MPI_Count count, MPI_Datatype type, MPI_Comm comm,
                  bool neighbor) {
  return {{buf, count * c.recv_peers(comm, neighbor), type}};
}

template <class C, class D>
RecvLayout blocks_v(Call& c, const void* buf, const C* counts, const D* displs, MPI_Datatype type,
                    MPI_Comm comm, bool neighbor) {
  const auto n = c.recv_peers(comm, neighbor);
  const MPI_Aint extent = extent_of(type);
  RecvLayout out;
  out.reserve(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    out.push_back({offset(buf, static_cast<MPI_Aint>(displs[i]) * extent),
                   static_cast<MPI_Count>(counts[i]), type});
  }
  return out;
}

template <class C, class D>
RecvLayout blocks_w(Call& c, const void* buf, const C* counts, const D* byte_displs,
                    const MPI_Datatype* types, MPI_Comm comm, bool neighbor) {
  const auto n = c.recv_peers(comm, neighbor);
  RecvLayout out;
  for (std::int64_t i = 0; i < n; ++i) {
    out.push_back({offset(buf, static_cast<MPI_Aint>(byte_displs[i])),
                   static_cast<MPI_Count>(counts[i]), types[i]});
  }
  return out;
}

// The count and displacement types of the int and large-count (_c) bindings.
template RecvLayout gatherv(Call&, const void*, const int*, const int*, MPI_Datatype, int,
                            MPI_Comm);
template RecvLayout gatherv(Call&, const void*, const MPI_Count*, const MPI_Aint*, MPI_Datatype,
                            int, MPI_Comm);
template RecvLayout mine(Call&, const void*, const int*, MPI_Datatype, MPI_Comm);
template RecvLayout mine(Call&, const void*, const MPI_Count*, MPI_Datatype, MPI_Comm);
template RecvLayout blocks_v(Call&, const void*, const int*, const int*, MPI_Datatype, MPI_Comm,
                             bool);
template RecvLayout blocks_v(Call&, const void*, const MPI_Count*, const MPI_Aint*, MPI_Datatype,
                             MPI_Comm, bool);
template RecvLayout blocks_w(Call&, const void*, const int*, const int*, const MPI_Datatype*,
                             MPI_Comm, bool);
template RecvLayout blocks_w(Call&, const void*, const int*, const MPI_Aint*, const MPI_Datatype*,
                             MPI_Comm, bool);
template RecvLayout blocks_w(Call&, const void*, const MPI_Count*, const MPI_Aint*,
                             const MPI_Datatype*, MPI_Comm, bool);

}  // namespace encore::dump::layout
