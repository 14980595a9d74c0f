#include "replay_topology.hpp"

#include "step.hpp"
#include <fmt/format.h>

namespace encore::replay::rtopo {
namespace {

CommState* made_state(Step& s, MPI_Comm made) {
  return made == MPI_COMM_NULL ? nullptr : &s.comm(made);
}

}  // namespace

void cart(Step& s, MPI_Comm made, int ndims) {
  if (CommState* c = made_state(s, made)) {
    c->topology = Topology::cart;
    c->cart_ndims = ndims;
    c->indegree = c->outdegree = 2 * ndims;
  }
}

void cart_sub(Step& s, MPI_Comm parent, const int* remain_dims, MPI_Comm made) {
  const int parent_ndims = s.comm(parent).cart_ndims;
  if (parent_ndims < 0 || !remain_dims) return;
  int kept = 0;
  for (int i = 0; i < parent_ndims; ++i) kept += remain_dims[i] ? 1 : 0;
  cart(s, made, kept);
}

void graph(Step& s, MPI_Comm made, int nnodes, const int* index) {
  CommState* c = made_state(s, made);
  if (!c || !index || c->rank < 0 || c->rank >= nnodes) return;
  c->topology = Topology::graph;
  c->indegree = c->outdegree = index[c->rank] - (c->rank > 0 ? index[c->rank - 1] : 0);
}

void dist_graph(Step& s, MPI_Comm made) {
  CommState* c = made_state(s, made);
  if (!c) return;
  c->topology = Topology::dist_graph;
  if (const auto& n = s.replayer().current().neighbours) {
    c->indegree = static_cast<int>(n->sources.size());
    c->outdegree = static_cast<int>(n->destinations.size());
  }
}

void degrees(Step& s, MPI_Comm comm, int indegree, int outdegree) {
  CommState& c = s.comm(comm);
  c.topology = Topology::dist_graph;
  c.indegree = indegree;
  c.outdegree = outdegree;
}

void inherit(Step& s, MPI_Comm parent, MPI_Comm made) {
  CommState* c = made_state(s, made);
  if (!c) return;
  const CommState& p = s.comm(parent);
  c->topology = p.topology;
  c->indegree = p.indegree;
  c->outdegree = p.outdegree;
  c->cart_ndims = p.cart_ndims;
}

int in_degree(Step& s, MPI_Comm comm) {
  const CommState& c = s.comm(comm);
  if (c.indegree >= 0) return c.indegree;
  Replayer& r = s.replayer();
  const auto& version = r.manifest().format_version;
  if (c.topology == Topology::dist_graph && version.minor >= 1)
    r.fail(
        fmt::format("event {}: neighborhood collective on a communicator from "
                    "MPI_Dist_graph_create whose neighbours the trace does not hold",
                    r.index()));
  if (c.topology == Topology::dist_graph)
    r.fail(
        fmt::format("event {}: neighborhood collective on a communicator from "
                    "MPI_Dist_graph_create whose in-degree this rank's trace does not hold "
                    "(the replay learns it from MPI_Dist_graph_create_adjacent or "
                    "MPI_Dist_graph_neighbors_count); not implemented yet",
                    r.index()));
  r.fail(
      fmt::format("event {}: neighborhood collective on a communicator without a process "
                  "topology the replay knows of",
                  r.index()));
}

int out_degree(Step& s, MPI_Comm comm) {
  const CommState& c = s.comm(comm);
  if (c.outdegree >= 0) return c.outdegree;
  in_degree(s, comm);  // fails, saying why, when the topology is not known
  return s.comm(comm).outdegree;
}

}  // namespace encore::replay::rtopo
