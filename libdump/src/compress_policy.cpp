#include "compress_policy.hpp"

#include "encore/cpu_budget.hpp"

namespace encore::dump {

bool compress_after_run(CompressWhen when, MPI_Comm world) {
  if (when != CompressWhen::automatic) return when == CompressWhen::after;
  MPI_Comm node = MPI_COMM_NULL;
  int node_ranks = 1;
  if (PMPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
    PMPI_Comm_size(node, &node_ranks);
    PMPI_Comm_free(&node);
  }
  // MPICH's ranks busy-poll while they wait, so a rank holds its core all the time: with no
  // core left over, the writer threads' compression runs in time taken from the ranks. A rank
  // bound to one core (or held to one by a CPU quota) shares it with its writer whatever the
  // node has.
  const double cpus = usable_cpus();
  int after = cpus <= 1.0 || node_ranks >= cpus ? 1 : 0;
  // Every rank decides alike (affinity masks may differ), so the trace has one policy.
  int any = 0;
  PMPI_Allreduce(&after, &any, 1, MPI_INT, MPI_MAX, world);
  return any != 0;
}

}  // namespace encore::dump
