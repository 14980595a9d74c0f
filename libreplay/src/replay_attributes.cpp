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
  // What MPICH answers under mpiexec (hydra) for the unrecorded Fortran helper.
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

}  // namespace

void get(Step& s, MPI_Comm comm, int keyval, void* value, int flag) {
  if (!flag || !value) return;
  const int idx = predefined_index(keyval);
  if (idx >= 0) {
    Predefined& p = predefined();
    if (keyval == MPI_UNIVERSE_SIZE)
      p.values[idx] = static_cast<int>(s.replayer().manifest().nprocs);
    *static_cast<int**>(value) = &p.values[idx];
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

int fortran_get(MPI_Comm comm, int keyval, void* value, Kind kind) {
  const int idx = predefined_index(keyval);
  std::intptr_t v = 0;
  if (idx >= 0) {
    Predefined& p = predefined();
    if (!p.present[idx]) return 0;
    if (kind == Kind::pointer) {
      *static_cast<int**>(value) = &p.values[idx];
      return 1;
    }
    v = p.values[idx];
  } else {
    const auto it = values().find({comm, keyval});
    if (it == values().end()) return 0;
    v = reinterpret_cast<std::intptr_t>(it->second);
    if (kind == Kind::pointer) {
      *static_cast<void**>(value) = it->second;
      return 1;
    }
  }
  if (kind == Kind::fint)
    *static_cast<MPI_Fint*>(value) = static_cast<MPI_Fint>(v);
  else
    *static_cast<MPI_Aint*>(value) = static_cast<MPI_Aint>(v);
  return 1;
}

void fortran_set(MPI_Comm comm, int keyval, void* value) { set(comm, keyval, value); }

}  // namespace encore::replay::rattr
