#include "replay_attributes.hpp"

#include <cstdint>
#include <map>
#include <utility>

#include "step.hpp"
#include <fmt/format.h>

namespace encore::replay::rattr {
namespace {

// MPICH 4.0.2's predefined attributes (mpi.h: 0x64400001 + 2*index for C, +1 for Fortran).
constexpr int kFirstKey = MPI_TAG_UB;
constexpr int kKeys = 7;  // TAG_UB HOST IO WTIME_IS_GLOBAL UNIVERSE_SIZE LASTUSEDCODE APPNUM

struct Predefined {
  int values[kKeys] = {
      268435455,       // MPI_TAG_UB: 2^28 - 1 with ch4:ucx
      MPI_PROC_NULL,   // MPI_HOST
      MPI_ANY_SOURCE,  // MPI_IO: every rank can do I/O
      0,               // MPI_WTIME_IS_GLOBAL
      0,               // MPI_UNIVERSE_SIZE: set from the manifest when the record has it
      1073741823,      // MPI_LASTUSEDCODE: moved by MPI_Add_error_class
      0,               // MPI_APPNUM: the first (only) application of the launch
  };
  // What MPICH answers under mpiexec (hydra) for the Fortran helper, unrecorded before 1.1.
  bool present[kKeys] = {true, true, true, true, false, true, true};
};

Predefined& predefined() {
  static Predefined p;
  return p;
}

// The index of a predefined key (C or Fortran form), or -1.
int predefined_index(int keyval) {
  const int off = keyval - kFirstKey;
  if (off < 0 || off >= 2 * kKeys) return -1;
  return off / 2;
}

std::map<std::pair<MPI_Comm, int>, void*>& values() {
  static std::map<std::pair<MPI_Comm, int>, void*> v;
  return v;
}

// Whether the trace records attribute values and libmpichfort's attribute calls (format 1.1).
bool values_recorded(const Replayer& r) {
  const auto& v = r.manifest().format_version;
  return v.major > 1 || v.minor >= 1;
}

// The recorded value of predefined key `idx` into MPICH-like storage (programs keep the
// pointer); traces before 1.1 get MPICH's constants.
int& predefined_value(Step& s, int idx, int keyval) {
  Predefined& p = predefined();
  Replayer& r = s.replayer();
  if (const auto& recorded = r.current().attribute) {
    p.values[idx] = static_cast<int>(*recorded);
  } else if (values_recorded(r)) {
    r.fail(fmt::format("event {}: the trace holds no value for predefined attribute key {:#x}",
                       r.index(), keyval));
  } else if (keyval == MPI_UNIVERSE_SIZE) {
    p.values[idx] = static_cast<int>(r.manifest().nprocs);
  }
  return p.values[idx];
}

}  // namespace

void get(Step& s, MPI_Comm comm, int keyval, void* value, int flag) {
  if (!flag || !value) return;
  const int idx = predefined_index(keyval);
  if (idx >= 0) {
    *static_cast<int**>(value) = &predefined_value(s, idx, keyval);
    return;
  }
  const auto it = values().find({comm, keyval});
  if (it == values().end()) {
    Replayer& r = s.replayer();
    r.fail(
        fmt::format("event {}: the recorded run found a value for attribute key {} that the "
                    "replayed program never set on this communicator (attributes copied by "
                    "MPI_Comm_dup callbacks are not implemented yet)",
                    r.index(), keyval));
  }
  *static_cast<void**>(value) = it->second;
}

void set(MPI_Comm comm, int keyval, void* value) { values()[{comm, keyval}] = value; }

void erase(MPI_Comm comm, int keyval) { values().erase({comm, keyval}); }

void error_class_added(int error_class) {
  int& last = predefined().values[predefined_index(MPI_LASTUSEDCODE)];
  if (error_class > last) last = error_class;
}

namespace {

// The value of `keyval` on comm, written as libmpichfort asked for it; false if it has none.
bool fortran_value(Step* s, MPI_Comm comm, int keyval, void* value, Kind kind) {
  const int idx = predefined_index(keyval);
  std::intptr_t v = 0;
  if (idx >= 0) {
    Predefined& p = predefined();
    if (!s && !p.present[idx]) return false;
    int& stored = s ? predefined_value(*s, idx, keyval) : p.values[idx];
    if (kind == Kind::pointer) {
      *static_cast<int**>(value) = &stored;
      return true;
    }
    v = stored;
  } else {
    const auto it = values().find({comm, keyval});
    if (it == values().end()) return false;
    v = reinterpret_cast<std::intptr_t>(it->second);
    if (kind == Kind::pointer) {
      *static_cast<void**>(value) = it->second;
      return true;
    }
  }
  if (kind == Kind::fint)
    *static_cast<MPI_Fint*>(value) = static_cast<MPI_Fint>(v);
  else
    *static_cast<MPI_Aint*>(value) = static_cast<MPI_Aint>(v);
  return true;
}

}  // namespace

int fortran_get(MPI_Comm comm, int keyval, void* value, int* flag, Kind kind) {
  Replayer* r = Replayer::get();
  if (!r || !values_recorded(*r)) {
    const bool found = value && fortran_value(nullptr, comm, keyval, value, kind);
    if (flag) *flag = found ? 1 : 0;
    return MPI_SUCCESS;
  }
  // Recorded by libdump as MPI_Comm_get_attr: comm, comm_keyval, flag (out).
  Step s(fn::Comm_get_attr);
  s.in_comm(0, comm);
  s.in_value(1, keyval);
  s.check();
  if (s.ok()) {
    int recorded = 0;
    s.out_value(3, &recorded);
    if (recorded && value && !fortran_value(&s, comm, keyval, value, kind)) {
      Replayer& rep = s.replayer();
      rep.fail(
          fmt::format("event {}: the recorded run found a value for attribute key {} that "
                      "the replayed program never set on this communicator",
                      rep.index(), keyval));
    }
    if (flag) *flag = recorded;
  }
  return s.rc();
}

void fortran_set(MPI_Comm comm, int keyval, void* value) { set(comm, keyval, value); }

}  // namespace encore::replay::rattr
