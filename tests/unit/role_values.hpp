// A value for an argument of any role, as the tests that write and read events back use it:
// one that differs from a fresh ArgValue (so a value left over from another event would show),
// valid for the writer (request references no later than the event).
#pragma once

#include <cstdint>
#include <string>

#include "encore/event.hpp"
#include "encore/event_format.hpp"
#include "encore/role_coding.hpp"

namespace encore {

// A value of `role`'s coding that differs from a fresh ArgValue, so a leftover would show.
inline ArgValue value_of(Role role, std::int64_t seed, const Event& ev) {
  ArgValue a;
  a.present = role != Role::opaque;
  switch (coding_of(role)) {
    case Coding::nothing:
      break;
    case Coding::id:
      a.scalar = 2 + seed % 300;
      break;
    case Coding::value:
      a.scalar = seed % 2 ? -seed * 100000 : seed;  // long varints too
      break;
    case Coding::values:
      a.list = {seed, -seed, 3};
      break;
    case Coding::ids:
      a.list = {2, 1024 + seed};
      break;
    case Coding::new_comm:
      a.scalar = seed % 3 == 0 ? event_format::kNullId : 1024 + seed;  // MPI_COMM_NULL too
      if (a.scalar != event_format::kNullId) {
        a.flags = seed % 2;
        a.list = {0, 3, 1};
        if (a.flags) a.remote = {5, 2};
      }
      break;
    case Coding::new_group:
      a.scalar = seed % 3 == 0 ? event_format::kNullId : 1024 + seed;
      if (a.scalar != event_format::kNullId) a.list = {2, 0};
      break;
    case Coding::request:
      a.requests = {RequestRef{false, ev.thread, ev.index > 0 ? ev.index - 1 : 0}};
      if (ev.index == 0) a.requests[0] = RequestRef{false, 3, 77};  // another thread's
      break;
    case Coding::requests:
      a.requests = {RequestRef{}, RequestRef{false, 2, 9 + static_cast<std::uint64_t>(seed)}};
      if (ev.index > 1) a.requests.push_back(RequestRef{false, ev.thread, ev.index - 2});
      break;
    case Coding::status:
      a.statuses = {StatusRecord{2, seed, 7, 64, -3}};
      break;
    case Coding::statuses:
      a.statuses = {StatusRecord{1, 2, 3, 4, 0}, StatusRecord{0, -1, seed, 800000, 9}};
      break;
    case Coding::text:
      a.text = "t" + std::to_string(seed);
      break;
    case Coding::real:
      a.real = 0.25 * static_cast<double>(seed);
      break;
  }
  return a;
}

}  // namespace encore
