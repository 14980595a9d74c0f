// How the models see each MPI function: what kind of communication it is, and the arguments
// they need, looked up by parameter role. Internal to libtime's predict code.
#pragma once

#include <cstdint>

#include "encore/event.hpp"
#include "encore/predict/collectives.hpp"

namespace encore::predict {

enum class Op : std::uint8_t {
  local,  // keeps its recorded duration
  send,   // blocking send (sync: Ssend)
  isend,
  recv,
  irecv,
  sendrecv,
  wait,  // Wait, Waitall, Waitany, Waitsome
  test,  // Test* (completes requests only when its flag says so)
  coll,
  icoll,
  comm_create,  // a blocking call over a communicator that creates another
};

struct CallClass {
  Op op = Op::local;
  bool sync = false;      // Ssend, Issend: always waits for the receive
  bool buffered = false;  // Bsend, Ibsend: never does (the data goes to the attached buffer)
  CollKind coll = CollKind::barrier;
};

const CallClass& classify(std::uint16_t function);

// The nth argument of `ev` with role `role` (0 = first), or nullptr.
const ArgValue* arg_of(const Event& ev, Role role, int nth = 0);
std::int64_t scalar_of(const Event& ev, Role role, int nth = 0, std::int64_t fallback = 0);

}  // namespace encore::predict
