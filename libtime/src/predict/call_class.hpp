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
  bool any = false;   // Waitany, Testany
  bool some = false;  // Waitsome, Testsome
};

const CallClass& classify(std::uint16_t function);

// Whether a call moves data (its sizes are worth computing), and whether it can create or
// free something RankContext tracks (types, communicators, groups): the per-call work of the
// models is kept to the calls that need it.
bool moves_data(Op op);
inline bool shapes_context(const Event& ev) {
  const Category c = ev.info().category;
  return c == Category::datatype || c == Category::communicator;
}

// The nth argument of `ev` with role `role` (0 = first), or nullptr.
const ArgValue* arg_of(const Event& ev, Role role, int nth = 0);
std::int64_t scalar_of(const Event& ev, Role role, int nth = 0, std::int64_t fallback = 0);

}  // namespace encore::predict
