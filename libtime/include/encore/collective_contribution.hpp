// What one rank hands a collective as its own input (its "contribution"), as blocks of its
// memory: the send buffer, or with MPI_IN_PLACE the part of the receive buffer that holds the
// input. libdump hashes these blocks when recording and libreplay hashes the same blocks when
// replaying, so a replay that computes different data is caught at the collective itself.
// One definition for both sides, so the two cannot drift apart.
//
// Needs MPICH's <mpi.h> (the includer's). `Ctx` answers the communicator facts the layouts
// depend on: rank(comm), inter(comm), local_size(comm) (the members of the rank's own group),
// send_peers(comm, neighbor) (the members, the remote group's size, or the out-degree a rank
// sends to) and extent(type).
#pragma once

#include <cstdint>
#include <vector>

#include <mpi.h>

namespace encore::contribution {

struct Block {
  const void* base;
  MPI_Count count;
  MPI_Datatype type;
};

// Most collectives contribute one block: kept inline, a vector only for the v/w variants.
class Blocks {
 public:
  void add(const void* base, MPI_Count count, MPI_Datatype type) {
    if (count <= 0) return;  // nothing to hash: empty blocks are not recorded
    if (n_++ == 0)
      first_ = {base, count, type};
    else
      rest_.push_back({base, count, type});
  }
  std::size_t size() const noexcept { return n_; }
  bool empty() const noexcept { return n_ == 0; }
  const Block& operator[](std::size_t i) const noexcept { return i == 0 ? first_ : rest_[i - 1]; }

 private:
  Block first_{nullptr, 0, MPI_DATATYPE_NULL};
  std::vector<Block> rest_;
  std::size_t n_ = 0;
};

namespace detail {

inline const void* at(const void* base, MPI_Aint bytes) {
  return static_cast<const char*>(base) + bytes;
}

template <class Ctx>
bool is_root(Ctx& x, int root, MPI_Comm comm) {
  return x.inter(comm) ? root == MPI_ROOT : root == x.rank(comm);
}

// On an intercommunicator the root's group other than the root contributes nothing.
template <class Ctx>
bool root_side_bystander(Ctx& x, int root, MPI_Comm comm) {
  return x.inter(comm) && (root == MPI_ROOT || root == MPI_PROC_NULL);
}

// One block per peer at element displacements (the v variants).
template <class C, class D>
Blocks per_peer(const void* buf, const C* counts, const D* displs, MPI_Datatype type,
                MPI_Aint extent, std::int64_t peers) {
  Blocks b;
  for (std::int64_t i = 0; counts && displs && i < peers; ++i)
    b.add(at(buf, static_cast<MPI_Aint>(displs[i]) * extent), static_cast<MPI_Count>(counts[i]),
          type);
  return b;
}

// One block per peer at byte displacements, each with its own type (the w variants).
template <class C, class D>
Blocks per_peer_w(const void* buf, const C* counts, const D* byte_displs, const MPI_Datatype* types,
                  std::int64_t peers) {
  Blocks b;
  for (std::int64_t i = 0; counts && byte_displs && types && i < peers; ++i)
    b.add(at(buf, static_cast<MPI_Aint>(byte_displs[i])), static_cast<MPI_Count>(counts[i]),
          types[i]);
  return b;
}

}  // namespace detail

// MPI_Allreduce, MPI_Scan, MPI_Exscan: the send buffer, or in place the receive buffer.
template <class Ctx>
Blocks reduction(Ctx&, const void* sendbuf, const void* recvbuf, MPI_Count count,
                 MPI_Datatype type) {
  Blocks b;
  b.add(sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf, count, type);
  return b;
}

template <class Ctx>
Blocks reduce(Ctx& x, const void* sendbuf, const void* recvbuf, MPI_Count count, MPI_Datatype type,
              int root, MPI_Comm comm) {
  if (detail::root_side_bystander(x, root, comm)) return {};
  return reduction(x, sendbuf, recvbuf, count, type);
}

// The send buffer holds the blocks of the rank's own group, also on an intercommunicator
// (the standard: a group's input vectors hold as many elements as its results; MPICH reduces
// local_size * recvcount elements there). MPI_IN_PLACE is for intracommunicators only.
template <class Ctx>
Blocks reduce_scatter_block(Ctx& x, const void* sendbuf, const void* recvbuf, MPI_Count recvcount,
                            MPI_Datatype type, MPI_Comm comm) {
  return reduction(x, sendbuf, recvbuf, recvcount * x.local_size(comm), type);
}

template <class Ctx, class C>
Blocks reduce_scatter(Ctx& x, const void* sendbuf, const void* recvbuf, const C* recvcounts,
                      MPI_Datatype type, MPI_Comm comm) {
  if (!recvcounts) return {};
  MPI_Count total = 0;
  for (std::int64_t i = 0, n = x.local_size(comm); i < n; ++i)
    total += static_cast<MPI_Count>(recvcounts[i]);
  return reduction(x, sendbuf, recvbuf, total, type);
}

// The root's buffer; on an intercommunicator the root is the one passing MPI_ROOT.
template <class Ctx>
Blocks bcast(Ctx& x, const void* buffer, MPI_Count count, MPI_Datatype type, int root,
             MPI_Comm comm) {
  Blocks b;
  if (detail::is_root(x, root, comm)) b.add(buffer, count, type);
  return b;
}

// MPI_Gather(v): every member's send buffer; an in-place root sends nothing.
template <class Ctx>
Blocks gather(Ctx& x, const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int root,
              MPI_Comm comm) {
  Blocks b;
  if (sendbuf != MPI_IN_PLACE && !detail::root_side_bystander(x, root, comm))
    b.add(sendbuf, sendcount, sendtype);
  return b;
}

template <class Ctx>
Blocks scatter(Ctx& x, const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int root,
               MPI_Comm comm) {
  Blocks b;
  if (detail::is_root(x, root, comm))
    b.add(sendbuf, sendcount * x.send_peers(comm, false), sendtype);
  return b;
}

template <class Ctx, class C, class D>
Blocks scatterv(Ctx& x, const void* sendbuf, const C* sendcounts, const D* displs,
                MPI_Datatype sendtype, int root, MPI_Comm comm) {
  if (!detail::is_root(x, root, comm)) return {};
  return detail::per_peer(sendbuf, sendcounts, displs, sendtype, x.extent(sendtype),
                          x.send_peers(comm, false));
}

// MPI_Allgather: in place, the rank's own block of the receive buffer.
template <class Ctx>
Blocks allgather(Ctx& x, const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                 const void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  Blocks b;
  if (sendbuf == MPI_IN_PLACE)
    b.add(detail::at(recvbuf, x.rank(comm) * recvcount * x.extent(recvtype)), recvcount, recvtype);
  else
    b.add(sendbuf, sendcount, sendtype);
  return b;
}

template <class Ctx, class C, class D>
Blocks allgatherv(Ctx& x, const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                  const void* recvbuf, const C* recvcounts, const D* displs, MPI_Datatype recvtype,
                  MPI_Comm comm) {
  Blocks b;
  if (sendbuf != MPI_IN_PLACE) {
    b.add(sendbuf, sendcount, sendtype);
  } else if (recvcounts && displs) {
    const int me = x.rank(comm);
    b.add(detail::at(recvbuf, static_cast<MPI_Aint>(displs[me]) * x.extent(recvtype)),
          static_cast<MPI_Count>(recvcounts[me]), recvtype);
  }
  return b;
}

// MPI_Alltoall: in place, the whole receive buffer is the input (and is overwritten).
template <class Ctx>
Blocks alltoall(Ctx& x, const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                const void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  const std::int64_t n = x.send_peers(comm, false);
  Blocks b;
  if (sendbuf == MPI_IN_PLACE)
    b.add(recvbuf, recvcount * n, recvtype);
  else
    b.add(sendbuf, sendcount * n, sendtype);
  return b;
}

template <class Ctx, class C, class D>
Blocks alltoallv(Ctx& x, const void* sendbuf, const C* sendcounts, const D* sdispls,
                 MPI_Datatype sendtype, const void* recvbuf, const C* recvcounts, const D* rdispls,
                 MPI_Datatype recvtype, MPI_Comm comm) {
  const std::int64_t n = x.send_peers(comm, false);
  if (sendbuf == MPI_IN_PLACE)
    return detail::per_peer(recvbuf, recvcounts, rdispls, recvtype, x.extent(recvtype), n);
  return detail::per_peer(sendbuf, sendcounts, sdispls, sendtype, x.extent(sendtype), n);
}

template <class Ctx, class C, class D>
Blocks alltoallw(Ctx& x, const void* sendbuf, const C* sendcounts, const D* sdispls,
                 const MPI_Datatype* sendtypes, const void* recvbuf, const C* recvcounts,
                 const D* rdispls, const MPI_Datatype* recvtypes, MPI_Comm comm) {
  const std::int64_t n = x.send_peers(comm, false);
  if (sendbuf == MPI_IN_PLACE)
    return detail::per_peer_w(recvbuf, recvcounts, rdispls, recvtypes, n);
  return detail::per_peer_w(sendbuf, sendcounts, sdispls, sendtypes, n);
}

// Neighbourhood collectives (no MPI_IN_PLACE): allgather(v) sends its one block to every
// out-neighbour, alltoall(v/w) one block per out-neighbour.
template <class Ctx>
Blocks neighbor_allgather(Ctx&, const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype) {
  Blocks b;
  b.add(sendbuf, sendcount, sendtype);
  return b;
}

template <class Ctx>
Blocks neighbor_alltoall(Ctx& x, const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                         MPI_Comm comm) {
  Blocks b;
  b.add(sendbuf, sendcount * x.send_peers(comm, true), sendtype);
  return b;
}

template <class Ctx, class C, class D>
Blocks neighbor_alltoallv(Ctx& x, const void* sendbuf, const C* sendcounts, const D* sdispls,
                          MPI_Datatype sendtype, MPI_Comm comm) {
  return detail::per_peer(sendbuf, sendcounts, sdispls, sendtype, x.extent(sendtype),
                          x.send_peers(comm, true));
}

template <class Ctx, class C, class D>
Blocks neighbor_alltoallw(Ctx& x, const void* sendbuf, const C* sendcounts, const D* sdispls,
                          const MPI_Datatype* sendtypes, MPI_Comm comm) {
  return detail::per_peer_w(sendbuf, sendcounts, sdispls, sendtypes, x.send_peers(comm, true));
}

}  // namespace encore::contribution
