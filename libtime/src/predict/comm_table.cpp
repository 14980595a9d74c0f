#include "comm_table.hpp"

#include <algorithm>
#include <numeric>
#include <string_view>

#include "encore/event_format.hpp"

namespace encore::predict {
namespace {

std::uint64_t predefined_comm(std::string_view name) {
  const auto handles = predefined_handles(HandleKind::comm);
  for (std::size_t i = 0; i < handles.size(); ++i)
    if (name == handles[i].name) return event_format::kFirstPredefinedId + i;
  return event_format::kNullId;
}

}  // namespace

CommRegistry::CommRegistry(std::uint32_t nprocs) : nprocs_(nprocs) {}

std::uint32_t CommRegistry::intern(const std::vector<std::int64_t>& members,
                                   std::uint32_t occurrence) {
  const auto [it, fresh] =
      keys_.try_emplace({members, occurrence}, static_cast<std::uint32_t>(keys_.size()));
  return it->second;
}

CommTable::CommTable(std::uint32_t rank, CommRegistry& registry)
    : rank_(rank), registry_(&registry) {
  std::vector<std::int64_t> world(registry.nprocs());
  std::iota(world.begin(), world.end(), 0);
  if (const auto id = predefined_comm("MPI_COMM_WORLD")) add(id, std::move(world));
  if (const auto id = predefined_comm("MPI_COMM_SELF")) add(id, {static_cast<std::int64_t>(rank)});
}

void CommTable::add(std::uint64_t id, std::vector<std::int64_t> members) {
  const auto at = std::find(members.begin(), members.end(), static_cast<std::int64_t>(rank_));
  if (at == members.end()) return;
  const std::uint32_t occurrence = seen_[members]++;
  CommInfo c;
  c.index = static_cast<std::size_t>(at - members.begin());
  c.key = registry_->intern(members, occurrence);
  c.members = std::make_shared<const std::vector<std::int64_t>>(std::move(members));
  id_of_key_[c.key] = id;
  by_id_[id] = std::move(c);
  last_ = nullptr;
}

const CommInfo* CommTable::find_slow(std::uint64_t id) const {
  const auto it = by_id_.find(id);
  if (it == by_id_.end()) return nullptr;
  last_id_ = id;
  last_ = &it->second;
  return last_;
}

const CommInfo* CommTable::by_key(std::uint32_t key) const {
  const auto it = id_of_key_.find(key);
  return it == id_of_key_.end() ? nullptr : find(it->second);
}

void CommTable::observe(const Event& ev) {
  const auto params = ev.info().params;
  for (std::size_t i = 0; i < params.size() && i < ev.args.size(); ++i) {
    const ArgValue& a = ev.args[i];
    if (!a.present) continue;
    if (params[i].role == Role::comm_out && a.scalar != 0 && (a.flags & 1) == 0 && !a.list.empty())
      add(static_cast<std::uint64_t>(a.scalar), a.list);
    if (params[i].role == Role::comm_free) {
      const auto it = by_id_.find(static_cast<std::uint64_t>(a.scalar));
      if (it != by_id_.end()) {
        id_of_key_.erase(it->second.key);
        by_id_.erase(it);
        last_ = nullptr;
      }
    }
  }
}

}  // namespace encore::predict
