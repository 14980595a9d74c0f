#include "handle_ids.hpp"

namespace encore::dump {

HandleIds::HandleIds(HandleKind kind) {
  const auto predefined = predefined_handles(kind);
  for (std::size_t i = 0; i < predefined.size(); ++i) {
    fixed_.emplace(predefined[i].value,
                   event_format::kFirstPredefinedId + static_cast<std::uint32_t>(i));
  }
  fixed_[null_handle(kind)] = event_format::kNullId;
}

std::uint32_t HandleIds::lookup_slow(std::int64_t handle) const noexcept {
  std::uint32_t id = event_format::kUnknownId;
  if (auto it = live_.find(handle); it != live_.end())
    id = it->second;
  else if (auto f = fixed_.find(handle); f != fixed_.end())
    id = f->second;
  if (id != event_format::kUnknownId && id != event_format::kNullId) {
    cache_[slot(handle)] = {handle, id};
  }
  return id;
}

std::uint32_t HandleIds::create(std::int64_t handle) {
  if (auto f = fixed_.find(handle); f != fixed_.end()) return f->second;
  const std::uint32_t id = next_id_++;
  live_[handle] = id;
  forget(handle);
  return id;
}

std::uint32_t HandleIds::release(std::int64_t handle) {
  if (auto f = fixed_.find(handle); f != fixed_.end()) return f->second;
  std::uint32_t id = event_format::kUnknownId;
  if (auto it = live_.find(handle); it != live_.end()) {
    id = it->second;
    live_.erase(it);
  }
  forget(handle);
  return id;
}

void HandleIds::forget(std::int64_t handle) noexcept {
  if (Entry& e = cache_[slot(handle)]; e.handle == handle) e = {};
  if (last_.handle == handle) last_ = {kNoHandle, 0};
}

}  // namespace encore::dump
