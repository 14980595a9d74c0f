#include "replay_attributes.hpp"

#include <cstdint>
#include <cstdio>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

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

// What a key was created with. Comm and type callbacks have the same C type in MPICH, whose
// handles are all ints.
static_assert(std::is_same_v<MPI_Comm, int> && std::is_same_v<MPI_Datatype, int>);
using CopyFn = int(int, int, void*, void*, void*, int*);
using DeleteFn = int(int, int, void*, void*);
struct Keyval {
  CopyFn* copy = nullptr;
  DeleteFn* del = nullptr;
  void* extra = nullptr;
  bool fortran = false;
};
std::unordered_map<int, Keyval>& keyvals() {
  static std::unordered_map<int, Keyval> k;
  return k;
}

struct Attr {
  int keyval;
  void* value;
};
// Per object, newest key first (MPICH's list order, which its callbacks follow).
std::unordered_map<std::int64_t, std::vector<Attr>>& objects() {
  static std::unordered_map<std::int64_t, std::vector<Attr>> o;
  return o;
}

void* const* find(std::int64_t object, int keyval) {
  const auto it = objects().find(object);
  if (it == objects().end()) return nullptr;
  for (const Attr& a : it->second)
    if (a.keyval == keyval) return &a.value;
  return nullptr;
}

// The key's callbacks, if C ones are to run (Fortran ones are skipped, said once).
const Keyval* callbacks(int keyval) {
  const auto it = keyvals().find(keyval);
  if (it == keyvals().end()) return nullptr;
  if (it->second.fortran && (it->second.copy || it->second.del)) {
    static bool said = false;
    if (!said && !Replayer::get()->options().quiet)
      std::fprintf(stderr,
                   "encore replay: attribute callbacks of Fortran keys are not implemented yet; "
                   "they are skipped\n");
    said = true;
    return nullptr;
  }
  return &it->second;
}

// The program's callbacks may not call MPI: what they called in the recorded run was not
// recorded (libdump ignores calls made from inside MPI).
class InCallback {
 public:
  InCallback() { Replayer::get()->set_in_callback(true); }
  ~InCallback() { Replayer::get()->set_in_callback(false); }
};

void run_delete(std::int64_t object, const Attr& a) {
  const Keyval* k = callbacks(a.keyval);
  if (!k || !k->del) return;
  InCallback guard;
  k->del(static_cast<int>(object), a.keyval, a.value, k->extra);
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
  get_type(s, comm, keyval, value, flag);
}

void get_type(Step& s, MPI_Datatype type, int keyval, void* value, int flag) {
  if (!flag || !value) return;
  void* const* v = find(type, keyval);
  if (!v) {
    Replayer& r = s.replayer();
    r.fail(
        fmt::format("event {}: the recorded run found a value for attribute key {} that the "
                    "replayed program never set on this object",
                    r.index(), keyval));
  }
  *static_cast<void**>(value) = *v;
}

void set(std::int64_t object, int keyval, void* value) {
  std::vector<Attr>& list = objects()[object];
  for (Attr& a : list) {
    if (a.keyval != keyval) continue;
    run_delete(object, a);  // as if MPI_Comm_delete_attr came first; the key keeps its place
    a.value = value;
    return;
  }
  list.insert(list.begin(), Attr{keyval, value});
}

void erase(std::int64_t object, int keyval) {
  const auto it = objects().find(object);
  if (it == objects().end()) return;
  std::vector<Attr>& list = it->second;
  for (auto a = list.begin(); a != list.end(); ++a) {
    if (a->keyval != keyval) continue;
    const Attr gone = *a;
    list.erase(a);
    run_delete(object, gone);
    return;
  }
}

void keyval_created(int keyval, void* copy_fn, void* delete_fn, void* extra_state) {
  keyvals()[keyval] = Keyval{reinterpret_cast<CopyFn*>(copy_fn),
                             reinterpret_cast<DeleteFn*>(delete_fn), extra_state, false};
}

void keyval_fortran(int keyval) { keyvals()[keyval].fortran = true; }

void copy(std::int64_t from, std::int64_t to) {
  const auto it = objects().find(from);
  if (it == objects().end()) return;
  const std::vector<Attr> source = it->second;  // a callback may not touch it, but be safe
  std::vector<Attr> copied;
  for (const Attr& a : source) {
    const Keyval* k = callbacks(a.keyval);
    if (!k || !k->copy) continue;  // MPI_*_NULL_COPY_FN: not copied
    void* out = nullptr;
    int flag = 0;
    {
      InCallback guard;
      k->copy(static_cast<int>(from), a.keyval, k->extra, a.value, &out, &flag);
    }
    if (flag) copied.push_back({a.keyval, out});
  }
  if (!copied.empty()) objects()[to] = std::move(copied);
}

void release(std::int64_t object) {
  const auto it = objects().find(object);
  if (it == objects().end()) return;
  const std::vector<Attr> list = std::move(it->second);
  objects().erase(it);
  for (const Attr& a : list) run_delete(object, a);
}

void finalize() {
  release(MPI_COMM_SELF);
  release(MPI_COMM_WORLD);
}

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
    void* const* found = find(comm, keyval);
    if (!found) return false;
    v = reinterpret_cast<std::intptr_t>(*found);
    if (kind == Kind::pointer) {
      *static_cast<void**>(value) = *found;
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
