// How the models see each MPI function: what kind of communication it is, and the arguments
// they need, looked up by parameter role. Internal to libtime's predict code.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "encore/event.hpp"
#include "encore/predict/collectives.hpp"

namespace encore::predict {

enum class Op : std::uint8_t {
  local,  // keeps its recorded duration
  send,   // blocking send (sync: Ssend)
  isend,
  recv,
  irecv,
  probe,  // Probe, Iprobe: waits for a message's envelope without receiving it
  sendrecv,
  wait,  // Wait, Waitall, Waitany, Waitsome
  test,  // Test* (completes requests only when its flag says so)
  coll,
  icoll,
  comm_create,  // a blocking call over a communicator that creates another
  // Persistent point-to-point (loggps re-times each MPI_Start(all) as an Isend or Irecv of
  // what the *_init call set up; the logged model keeps these as recorded, as local calls).
  psend_init,
  precv_init,
  start,         // Start, Startall
  free_request,  // Request_free: forgets a persistent request's set-up
  isendrecv,     // Isendrecv(_replace): an Isend and an Irecv under one request
  mprobe,        // Mprobe, Improbe: a receive of the message (Mrecv: its recorded copy)
};

// The ops the logged model keeps as recorded, as it keeps local calls.
inline bool logged_as_local(Op op) { return op == Op::local || op >= Op::psend_init; }

struct CallClass {
  Op op = Op::local;
  bool sync = false;      // Ssend, Issend: always waits for the receive
  bool buffered = false;  // Bsend, Ibsend: never does (the data goes to the attached buffer)
  CollKind coll = CollKind::barrier;
  bool any = false;     // Waitany, Testany
  bool some = false;    // Waitsome, Testsome
  bool moves = false;   // moves_data(op), looked up once
  bool shapes = false;  // a datatype or communicator call (see shapes_context)
  // Per call, the loggps engine's questions answered once per function:
  bool needs_comm = false;      // looks its communicator up (not local, wait or test)
  bool sized = false;           // sizes worth computing (moves data; not a receive)
  bool observes_comms = false;  // comm_create or local, with a comm_out or comm_free parameter
  bool modelled_p2p = false;    // a modelled point-to-point function (solo_cost's send sizes)
};

namespace detail {
// Built once at start-up from the (constant) function table; the last entry is for ids
// outside it.
extern const std::vector<CallClass> call_classes;
}  // namespace detail

// The tables hold fn::kCount functions (plus the entry for other ids): comparing with the
// constant saves working out a vector's size on every call.
inline const CallClass& classify(std::uint16_t function) {
  return detail::call_classes[function < fn::kCount ? function : std::size_t{fn::kCount}];
}

// Whether a call moves data (its sizes are worth computing), and whether it can create or
// free something RankContext tracks (types, communicators, groups): the per-call work of the
// models is kept to the calls that need it.
bool moves_data(Op op);
inline bool shapes_context(Category c) {
  return c == Category::datatype || c == Category::communicator;
}
inline bool shapes_context(const Event& ev) { return shapes_context(ev.info().category); }

namespace detail {
inline constexpr std::size_t kRoles = static_cast<std::size_t>(Role::ret_aint) + 1;
inline constexpr std::uint8_t kNoArg = 0xFF;
// Per function, the index of the first and second parameter of each role (kNoArg: none):
// the models look arguments up by role several times per call.
struct RoleIndex {
  std::array<std::array<std::uint8_t, 2>, kRoles> at;
  bool complete = false;  // false: more parameters than the index holds, search them
};
extern const std::vector<RoleIndex> role_index;  // built once at start-up
const ArgValue* search_arg(const Event& ev, Role role, int nth);
}  // namespace detail

// The nth argument of `ev` with role `role` (0 = first), or nullptr.
inline const ArgValue* arg_of(const Event& ev, Role role, int nth = 0) {
  const auto& index = detail::role_index;
  if ((nth == 0 || nth == 1) && ev.function < index.size() && index[ev.function].complete) {
    const std::size_t i = index[ev.function].at[static_cast<std::size_t>(role)][nth];
    if (i == detail::kNoArg || i >= ev.args.size()) return nullptr;
    return ev.args[i].present ? &ev.args[i] : nullptr;
  }
  return detail::search_arg(ev, role, nth);
}
inline std::int64_t scalar_of(const Event& ev, Role role, int nth = 0, std::int64_t fallback = 0) {
  const ArgValue* a = arg_of(ev, role, nth);
  return a ? a->scalar : fallback;
}

// Whether a Probe or Iprobe found its message (a Probe always does; an Iprobe says by its flag).
inline bool probe_found(const Event& ev) {
  const ArgValue* flag = arg_of(ev, Role::int_out);
  return ev.rc == 0 && (flag == nullptr || flag->scalar != 0);
}

// arg_of and scalar_of for several lookups in one event: its function's index found once.
class EventArgs {
 public:
  explicit EventArgs(const Event& ev) : ev_(ev), args_(ev.args.data()), n_(ev.args.size()) {
    const auto& index = detail::role_index;
    if (ev.function < fn::kCount && index[ev.function].complete) ix_ = &index[ev.function];
  }
  // nth: 0 or 1.
  const ArgValue* get(Role role, int nth = 0) const {
    if (ix_ == nullptr) return detail::search_arg(ev_, role, nth);
    const std::size_t i = ix_->at[static_cast<std::size_t>(role)][nth != 0];
    if (i == detail::kNoArg || i >= n_) return nullptr;
    const ArgValue* a = args_ + i;
    return a->present ? a : nullptr;
  }
  std::int64_t scalar(Role role, int nth = 0, std::int64_t fallback = 0) const {
    const ArgValue* a = get(role, nth);
    return a ? a->scalar : fallback;
  }

 private:
  const Event& ev_;
  const ArgValue* args_;
  std::size_t n_;
  const detail::RoleIndex* ix_ = nullptr;
};

}  // namespace encore::predict
