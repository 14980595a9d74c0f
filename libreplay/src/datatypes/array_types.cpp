#include "array_types.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "datatype_error.hpp"

namespace encore::replay {
namespace {

[[noreturn]] void reject(const std::string& what) { throw DatatypeError(what); }

void check_order(int order, const char* fn) {
  if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)
    reject(std::string(fn) + ": order must be MPI_ORDER_C or MPI_ORDER_FORTRAN");
}

// Places `t` at byte `disp` inside an array of `ub` bytes: hindexed_block(1, 1) + resized.
NewNode place(const TypeNode& t, MPI_Aint disp, MPI_Aint ub) {
  const NewNode placed = build_blockindexed(1, 1, &disp, true, t);
  return build_resized(*placed, 0, ub);
}

struct Dim {
  const std::vector<MPI_Aint>& gsizes;
  int dim, ndims, order;
  MPI_Aint orig_extent;
  // Bytes between consecutive indices of this dimension.
  MPI_Aint stride() const {
    MPI_Aint s = orig_extent;
    if (order == MPI_ORDER_FORTRAN)
      for (int i = 0; i < dim; ++i) s *= gsizes[static_cast<std::size_t>(i)];
    else
      for (int i = ndims - 1; i > dim; --i) s *= gsizes[static_cast<std::size_t>(i)];
    return s;
  }
  bool fastest() const { return order == MPI_ORDER_FORTRAN ? dim == 0 : dim == ndims - 1; }
  MPI_Aint gsize() const { return gsizes[static_cast<std::size_t>(dim)]; }
};

// MPIR_Type_block: this process's block of one dimension; `st` gets its first index.
NewNode block_dim(const Dim& d, int nprocs, int rank, int darg, const TypeNode& old, MPI_Aint& st) {
  const MPI_Aint global = d.gsize();
  MPI_Aint blksize = 0;
  if (darg == MPI_DISTRIBUTE_DFLT_DARG) {
    blksize = (global + nprocs - 1) / nprocs;
  } else {
    blksize = darg;
    if (blksize <= 0) reject("MPI_Type_create_darray: block distribution argument must be > 0");
    if (blksize * nprocs < global)
      reject("MPI_Type_create_darray: block distribution argument too small for the array");
  }
  const MPI_Aint mysize = std::max<MPI_Aint>(0, std::min(blksize, global - blksize * rank));
  NewNode t =
      d.fastest() ? build_contiguous(mysize, old) : build_vector(mysize, 1, d.stride(), true, old);
  st = mysize == 0 ? 0 : blksize * rank;
  return build_resized(*t, 0, global * old.bounds.extent());
}

// MPIR_Type_cyclic: this process's blocks of one dimension dealt round-robin.
NewNode cyclic_dim(const Dim& d, int nprocs, int rank, int darg, const TypeNode& old,
                   MPI_Aint& st) {
  const MPI_Aint blksize = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg;
  if (blksize <= 0) reject("MPI_Type_create_darray: cyclic distribution argument must be > 0");
  const MPI_Aint st_index = rank * blksize, end_index = d.gsize() - 1;
  MPI_Aint local = 0;
  if (end_index >= st_index) {
    const MPI_Aint span = end_index - st_index + 1, round = nprocs * blksize;
    local = (span / round) * blksize + std::min(span % round, blksize);
  }
  const MPI_Aint count = local / blksize, rem = local % blksize;
  const MPI_Aint stride = nprocs * blksize * d.stride();
  NewNode t = build_vector(count, blksize, stride, true, old);
  if (rem != 0) {  // a last, shorter block
    const MPI_Aint bls[2] = {1, rem}, disps[2] = {0, count * stride};
    const TypeNode* types[2] = {t.get(), &old};
    t = build_struct(2, bls, disps, types);
  }
  if (d.fastest()) {
    t = place(*t, rank * blksize * d.orig_extent, d.orig_extent * d.gsize());
    st = 0;
  } else {
    st = rank * blksize;
  }
  if (local == 0) st = 0;
  return build_resized(*t, 0, d.gsize() * old.bounds.extent());
}

}  // namespace

NewNode build_subarray(int ndims, const int* sizes, const int* subsizes, const int* starts,
                       int order, const TypeNode& old) {
  check_order(order, "MPI_Type_create_subarray");
  if (ndims <= 0) reject("MPI_Type_create_subarray: ndims must be > 0");
  for (int i = 0; i < ndims; ++i) {
    if (sizes[i] <= 0 || subsizes[i] < 0 || subsizes[i] > sizes[i] || starts[i] < 0 ||
        starts[i] > sizes[i] - subsizes[i])
      reject("MPI_Type_create_subarray: dimension " + std::to_string(i) + " has size " +
             std::to_string(sizes[i]) + ", subsize " + std::to_string(subsizes[i]) + ", start " +
             std::to_string(starts[i]));
  }
  const MPI_Aint extent = old.bounds.extent();
  // Dimension k in order of increasing stride: Fortran 0, 1, ...; C ndims-1, ndims-2, ...
  const auto at = [&](const int* a, int k) {
    return static_cast<MPI_Aint>(a[order == MPI_ORDER_FORTRAN ? k : ndims - 1 - k]);
  };
  NewNode t;
  if (ndims == 1) {
    t = build_contiguous(at(subsizes, 0), old);
  } else {
    t = build_vector(at(subsizes, 1), at(subsizes, 0), at(sizes, 0), false, old);
    MPI_Aint size = at(sizes, 0) * extent;
    for (int k = 2; k < ndims; ++k) {
      size *= at(sizes, k - 1);
      t = build_vector(at(subsizes, k), 1, size, true, *t);
    }
  }
  MPI_Aint disp = at(starts, 0), size = 1;
  for (int k = 1; k < ndims; ++k) {
    size *= at(sizes, k - 1);
    disp += size * at(starts, k);
  }
  MPI_Aint ub = extent;
  for (int k = 0; k < ndims; ++k) ub *= at(sizes, k);
  return place(*t, disp * extent, ub);
}

NewNode build_darray(int size, int rank, int ndims, const int* gsizes, const int* distribs,
                     const int* dargs, const int* psizes, int order, const TypeNode& old) {
  check_order(order, "MPI_Type_create_darray");
  if (size <= 0 || rank < 0 || rank >= size)
    reject("MPI_Type_create_darray: rank " + std::to_string(rank) + " not in [0, " +
           std::to_string(size) + ")");
  if (ndims <= 0) reject("MPI_Type_create_darray: ndims must be > 0");
  std::vector<MPI_Aint> g(static_cast<std::size_t>(ndims));
  for (int i = 0; i < ndims; ++i) {
    if (gsizes[i] <= 0 || psizes[i] <= 0)
      reject("MPI_Type_create_darray: gsizes and psizes must be > 0");
    if (distribs[i] != MPI_DISTRIBUTE_BLOCK && distribs[i] != MPI_DISTRIBUTE_CYCLIC &&
        distribs[i] != MPI_DISTRIBUTE_NONE)
      reject("MPI_Type_create_darray: invalid distribution " + std::to_string(distribs[i]));
    g[static_cast<std::size_t>(i)] = gsizes[i];
  }
  // Process coordinates in row-major order, as MPI_Cart_create would number them.
  std::vector<int> coords(static_cast<std::size_t>(ndims));
  int procs = size, tmp_rank = rank;
  for (int i = 0; i < ndims; ++i) {
    procs /= psizes[i];
    if (procs <= 0) reject("MPI_Type_create_darray: psizes do not divide size");
    coords[static_cast<std::size_t>(i)] = tmp_rank / procs;
    tmp_rank %= procs;
  }
  const MPI_Aint orig_extent = old.bounds.extent();
  std::vector<MPI_Aint> st(static_cast<std::size_t>(ndims));
  NewNode t;
  for (int k = 0; k < ndims; ++k) {  // fastest dimension first
    const int i = order == MPI_ORDER_FORTRAN ? k : ndims - 1 - k;
    const auto ui = static_cast<std::size_t>(i);
    const Dim d{g, i, ndims, order, orig_extent};
    const TypeNode& prev = t ? *t : old;
    switch (distribs[i]) {
      case MPI_DISTRIBUTE_BLOCK:
        t = block_dim(d, psizes[i], coords[ui], dargs[i], prev, st[ui]);
        break;
      case MPI_DISTRIBUTE_CYCLIC:
        t = cyclic_dim(d, psizes[i], coords[ui], dargs[i], prev, st[ui]);
        break;
      default:  // NONE: a block over one process (MPICH's C order keeps psize and coord)
        if (order == MPI_ORDER_FORTRAN)
          t = block_dim(d, 1, 0, MPI_DISTRIBUTE_DFLT_DARG, prev, st[ui]);
        else
          t = block_dim(d, psizes[i], coords[ui], MPI_DISTRIBUTE_DFLT_DARG, prev, st[ui]);
    }
  }
  MPI_Aint disp = 0, tmp = 1;
  for (int k = 0; k < ndims; ++k) {
    const auto i = static_cast<std::size_t>(order == MPI_ORDER_FORTRAN ? k : ndims - 1 - k);
    if (k > 0) {
      const auto prev = static_cast<std::size_t>(order == MPI_ORDER_FORTRAN ? k - 1 : ndims - k);
      tmp *= g[prev];
    }
    disp += tmp * st[i];
  }
  MPI_Aint ub = orig_extent;
  for (MPI_Aint v : g) ub *= v;
  return place(*t, disp * orig_extent, ub);
}

}  // namespace encore::replay
