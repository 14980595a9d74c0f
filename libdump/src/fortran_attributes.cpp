// libmpichfort answers MPI_COMM_GET_ATTR and MPI_ATTR_GET through MPICH's internal
// MPII_Comm_get_attr, never through MPI_Comm_get_attr, so no shim of mpi.h sees them. This
// wrapper (preloaded before libmpich) records them as MPI_Comm_get_attr events, with the value
// of a predefined key, so a replay answers Fortran programs from the trace as well.
#include <dlfcn.h>

#include <cstdio>

#include "call.hpp"

#define ENCORE_EXPORT __attribute__((visibility("default")))

using namespace encore;
using namespace encore::dump;

namespace {

using GetAttr = int (*)(MPI_Comm, int, void*, int*, int);

// How libmpichfort passes the value (MPICH's MPIR_Attr_type): pointer, MPI_Aint, MPI_Fint.
enum AttrKind { kPointer = 0, kAint = 1, kFint = 3 };

std::int64_t value_of(const void* v, int kind) {
  switch (kind) {
    case kPointer: {
      const int* p = *static_cast<const int* const*>(v);
      return p ? *p : 0;
    }
    case kAint:
      return *static_cast<const MPI_Aint*>(v);
    default:
      return *static_cast<const MPI_Fint*>(v);
  }
}

}  // namespace

extern "C" ENCORE_EXPORT int MPII_Comm_get_attr(MPI_Comm comm, int keyval, void* value, int* flag,
                                                int kind) {
  static const auto real = reinterpret_cast<GetAttr>(dlsym(RTLD_NEXT, "MPII_Comm_get_attr"));
  if (!real) {
    std::fprintf(stderr, "encore: MPII_Comm_get_attr: MPICH's own is not loaded\n");
    return MPI_ERR_INTERN;
  }
  Call c(fn::Comm_get_attr);
  if (!c.active()) return real(comm, keyval, value, flag, kind);
  c.begin();
  const int rc = real(comm, keyval, value, flag, kind);
  c.end(rc);
  // Encoded as MPI_Comm_get_attr's table entry: comm, comm_keyval, then the flag (out).
  c.put_comm(comm);
  c.put_int(keyval);
  if (c.ok()) {
    c.put_int_ptr(flag);
    if (flag && *flag && value) c.attribute_value(keyval, value_of(value, kind));
  }
  return rc;
}
