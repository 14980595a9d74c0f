#include "message_sizes.hpp"

namespace encore::exporter {

bool MessageSizes::is_world(std::uint64_t comm) {
  const auto [it, fresh] = is_world_.try_emplace(comm, false);
  if (fresh) {
    const CommInfo* c = ctx_.comm(comm);
    bool same = c && !c->inter && c->size() == static_cast<std::int64_t>(ctx_.world_size());
    for (std::int64_t i = 0; same && i < c->size(); ++i)
      same = c->members[static_cast<std::size_t>(i)] == i;
    it->second = same;
  }
  return it->second;
}

std::int64_t MessageSizes::world_rank(std::uint64_t comm, std::int64_t rank) const {
  const CommInfo* c = ctx_.comm(comm);
  if (!c || rank < 0) return -1;
  const auto& group = c->inter ? c->remote : c->members;
  if (static_cast<std::size_t>(rank) >= group.size()) return -1;
  return group[static_cast<std::size_t>(rank)];
}

std::uint64_t MessageSizes::comm_key(std::uint64_t comm) const {
  const CommInfo* c = ctx_.comm(comm);
  if (!c) return 0;
  // FNV-1a over both member lists; local and remote are swapped on the two sides of an
  // intercommunicator, so they are combined order-independently.
  auto fnv = [](const std::vector<std::int64_t>& v) {
    std::uint64_t h = 0xcbf29ce484222325ULL;
    for (const auto m : v) {
      h ^= static_cast<std::uint64_t>(m);
      h *= 0x100000001b3ULL;
    }
    return h;
  };
  const std::uint64_t k = c->inter ? fnv(c->members) ^ fnv(c->remote) : fnv(c->members);
  return k ? k : 1;
}

}  // namespace encore::exporter
