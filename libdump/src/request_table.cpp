#include "request_table.hpp"

#include <algorithm>

namespace encore::dump {

RequestInfo& RequestTable::add(MPI_Request r) { return live_[r].emplace_back(); }

RequestInfo* RequestTable::newest(MPI_Request r) {
  const auto it = live_.find(r);
  return it == live_.end() || it->second.empty() ? nullptr : &it->second.back();
}

RequestInfo* RequestTable::find(RequestSlot slot) {
  if (slot.handle == MPI_REQUEST_NULL) return nullptr;
  const auto it = live_.find(slot.handle);
  if (it == live_.end() || slot.occurrence >= it->second.size()) return nullptr;
  return &it->second[slot.occurrence];
}

void RequestTable::retire(std::span<RequestSlot> done) {
  // Highest occurrence first, so erasing one does not shift the others.
  std::sort(done.begin(), done.end(),
            [](const RequestSlot& a, const RequestSlot& b) { return a.occurrence > b.occurrence; });
  for (const RequestSlot& s : done) {
    const auto it = live_.find(s.handle);
    if (it == live_.end() || s.occurrence >= it->second.size()) continue;
    // An emptied entry stays: MPICH hands the same few handle values out again, and keeping
    // it saves a map node and a vector per request.
    it->second.erase(it->second.begin() + static_cast<std::ptrdiff_t>(s.occurrence));
  }
}

void request_slots(const MPI_Request* r, std::int64_t n, std::vector<RequestSlot>& out) {
  out.clear();
  if (!r || n <= 0) return;
  out.reserve(static_cast<std::size_t>(n));
  if (n <= 32) {
    for (std::int64_t i = 0; i < n; ++i) {
      std::size_t seen = 0;
      for (std::int64_t j = 0; j < i; ++j) seen += r[j] == r[i];
      out.push_back({r[i], seen});
    }
    return;
  }
  std::unordered_map<MPI_Request, std::size_t> seen;
  for (std::int64_t i = 0; i < n; ++i) out.push_back({r[i], seen[r[i]]++});
}

}  // namespace encore::dump
