#include "replay_types.hpp"

namespace encore::replay {

std::span<const std::byte> Types::pack(const void* buf, MPI_Count count, MPI_Datatype t,
                                       std::vector<std::byte>& scratch) const {
  const TypeNode& node = engine_.node(t);  // one lookup: this runs on every checked send
  if (node.bounds.size == 0 || (count <= 1 ? node.single_block() : node.contiguous()))
    return {static_cast<const std::byte*>(buf) + node.bounds.true_lb,
            static_cast<std::size_t>(count * node.bounds.size)};
  scratch.resize(static_cast<std::size_t>(engine_.pack_size(count, t)));
  const MPI_Count n = engine_.pack(buf, count, t, scratch.data());
  return {scratch.data(), static_cast<std::size_t>(n)};
}

}  // namespace encore::replay
