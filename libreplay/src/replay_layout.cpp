#include "replay_layout.hpp"

#include "replay_topology.hpp"
#include "step.hpp"

namespace encore::replay::rlayout {
namespace {

int peers(Step& s, MPI_Comm comm, bool neighbor) {
  if (neighbor) return rtopo::in_degree(s, comm);
  const CommState& c = s.comm(comm);
  return c.inter ? c.remote_size : c.size;
}

bool is_root(Step& s, int root, MPI_Comm comm) {
  const CommState& c = s.comm(comm);
  return c.inter ? root == MPI_ROOT : root == c.rank;
}

void* offset(void* base, MPI_Aint bytes) { return static_cast<char*>(base) + bytes; }

}  // namespace

OneBlock whole(Step&, void* buf, MPI_Count count, MPI_Datatype type) {
  if (buf == MPI_IN_PLACE) return {};
  return {buf, count, type};
}

OneBlock exscan(Step& s, void* buf, MPI_Count count, MPI_Datatype type, MPI_Comm comm) {
  if (s.comm(comm).rank == 0) return {};
  return whole(s, buf, count, type);
}

OneBlock bcast(Step& s, void* buf, MPI_Count count, MPI_Datatype type, int root, MPI_Comm comm) {
  const CommState& c = s.comm(comm);
  const bool receives = c.inter ? (root != MPI_ROOT && root != MPI_PROC_NULL) : root != c.rank;
  if (!receives) return {};
  return {buf, count, type};
}

OneBlock at_root(Step& s, void* buf, MPI_Count count, MPI_Datatype type, int root, MPI_Comm comm) {
  if (!is_root(s, root, comm)) return {};
  return {buf, count, type};
}

OneBlock gather(Step& s, void* buf, MPI_Count count, MPI_Datatype type, int root, MPI_Comm comm) {
  if (!is_root(s, root, comm)) return {};
  return {buf, count * peers(s, comm, false), type};
}

template <class C, class D>
RecvBlocks gatherv(Step& s, void* buf, const C* counts, const D* displs, MPI_Datatype type,
                   int root, MPI_Comm comm) {
  if (!is_root(s, root, comm)) return {};
  return blocks_v(s, buf, counts, displs, type, comm, false);
}

template <class C>
OneBlock mine(Step& s, void* buf, const C* counts, MPI_Datatype type, MPI_Comm comm) {
  return {buf, static_cast<MPI_Count>(counts[s.comm(comm).rank]), type};
}

OneBlock blocks(Step& s, void* buf, MPI_Count count, MPI_Datatype type, MPI_Comm comm,
                bool neighbor) {
  return {buf, count * peers(s, comm, neighbor), type};
}

template <class C, class D>
RecvBlocks blocks_v(Step& s, void* buf, const C* counts, const D* displs, MPI_Datatype type,
                    MPI_Comm comm, bool neighbor) {
  const int n = peers(s, comm, neighbor);
  const MPI_Aint extent = s.replayer().types().extent(type);
  RecvBlocks out;
  for (int i = 0; i < n; ++i)
    out.push_back({offset(buf, static_cast<MPI_Aint>(displs[i]) * extent),
                   static_cast<MPI_Count>(counts[i]), type});
  return out;
}

template <class C, class D>
RecvBlocks blocks_w(Step& s, void* buf, const C* counts, const D* byte_displs,
                    const MPI_Datatype* types, MPI_Comm comm, bool neighbor) {
  const int n = peers(s, comm, neighbor);
  RecvBlocks out;
  for (int i = 0; i < n; ++i)
    out.push_back({offset(buf, static_cast<MPI_Aint>(byte_displs[i])),
                   static_cast<MPI_Count>(counts[i]), types[i]});
  return out;
}

template RecvBlocks gatherv(Step&, void*, const int*, const int*, MPI_Datatype, int, MPI_Comm);
template RecvBlocks gatherv(Step&, void*, const MPI_Count*, const MPI_Aint*, MPI_Datatype, int,
                            MPI_Comm);
template OneBlock mine(Step&, void*, const int*, MPI_Datatype, MPI_Comm);
template OneBlock mine(Step&, void*, const MPI_Count*, MPI_Datatype, MPI_Comm);
template RecvBlocks blocks_v(Step&, void*, const int*, const int*, MPI_Datatype, MPI_Comm, bool);
template RecvBlocks blocks_v(Step&, void*, const MPI_Count*, const MPI_Aint*, MPI_Datatype,
                             MPI_Comm, bool);
template RecvBlocks blocks_w(Step&, void*, const int*, const int*, const MPI_Datatype*, MPI_Comm,
                             bool);
template RecvBlocks blocks_w(Step&, void*, const int*, const MPI_Aint*, const MPI_Datatype*,
                             MPI_Comm, bool);
template RecvBlocks blocks_w(Step&, void*, const MPI_Count*, const MPI_Aint*, const MPI_Datatype*,
                             MPI_Comm, bool);

}  // namespace encore::replay::rlayout
