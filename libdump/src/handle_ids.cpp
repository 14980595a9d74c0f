#include "handle_ids.hpp"

#include <mpi.h>

namespace encore::dump {
namespace {

std::int64_t null_handle(HandleKind kind) {
  switch (kind) {
    case HandleKind::comm:
      return MPI_COMM_NULL;
    case HandleKind::group:
      return MPI_GROUP_NULL;
    case HandleKind::datatype:
      return MPI_DATATYPE_NULL;
    case HandleKind::op:
      return MPI_OP_NULL;
    case HandleKind::info:
      return MPI_INFO_NULL;
    case HandleKind::errhandler:
      return MPI_ERRHANDLER_NULL;
    case HandleKind::win:
      return MPI_WIN_NULL;
    case HandleKind::message:
      return MPI_MESSAGE_NULL;
    case HandleKind::request:
      return MPI_REQUEST_NULL;
    default:
      return 0;  // MPI_File and MPI_Session are pointers: null is 0
  }
}

}  // namespace

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
