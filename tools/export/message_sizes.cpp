#include "message_sizes.hpp"

#include <cstring>

#include "encore/mpi_table.hpp"

namespace encore::exporter {
namespace {

std::uint64_t comm_id(const char* name) {
  const auto comms = predefined_handles(HandleKind::comm);
  for (std::size_t i = 0; i < comms.size(); ++i)
    if (std::strcmp(comms[i].name, name) == 0) return 2 + i;
  return 0;
}

}  // namespace

MessageSizes::MessageSizes(std::uint32_t my_rank)
    : world_(comm_id("MPI_COMM_WORLD")), self_(comm_id("MPI_COMM_SELF")), my_rank_(my_rank) {}

std::uint64_t MessageSizes::type_size(std::uint64_t datatype) const {
  const auto types = predefined_handles(HandleKind::datatype);
  if (datatype < 2 || datatype - 2 >= types.size()) return 0;
  // MPICH's builtin handles carry their size in bits 8..15 (kind 0x4c in the top byte).
  const auto v = static_cast<std::uint64_t>(types[datatype - 2].value);
  if ((v >> 24) != 0x4c) return 0;
  return (v >> 8) & 0xff;
}

bool MessageSizes::is_world(std::uint64_t comm) const { return comm == world_; }

std::int64_t MessageSizes::world_rank(std::uint64_t comm, std::int64_t rank) const {
  if (comm == world_) return rank;
  if (comm == self_ && rank == 0) return my_rank_;
  return -1;
}

}  // namespace encore::exporter
