// The shims the generator leaves to us: MPI_Init(_thread) start the recorder, MPI_Finalize and
// MPI_Abort close the trace, and MPI_Pcontrol is variadic.
#include "call.hpp"
#include <mpi.h>

using namespace encore;
using namespace encore::dump;

#define ENCORE_EXPORT __attribute__((visibility("default")))

namespace {

// Encoded as the table says: Init_thread's `required` (in), then `argc` and `provided` (out).
int record_init(fn::Id id, std::uint64_t t1, std::uint64_t t2, int rc, const int* argc,
                int required, const int* provided) {
  if (rc != MPI_SUCCESS) return rc;
  Recorder::start(provided ? *provided : MPI_THREAD_SINGLE);
  Call c(id);
  if (!c.active()) return rc;
  c.set_begin(t1);
  c.end_at(t2, rc);
  c.mark_heavy();
  if (provided) c.put_int(required);
  c.put_int_ptr(argc);
  if (provided) c.put_int(*provided);
  return rc;
}

}  // namespace

extern "C" ENCORE_EXPORT int MPI_Init(int* argc, char*** argv) {
  const std::uint64_t t1 = capture_clock().ticks();
  const int rc = PMPI_Init(argc, argv);
  const std::uint64_t t2 = capture_clock().ticks();
  return record_init(fn::Init, t1, t2, rc, argc, 0, nullptr);
}

extern "C" ENCORE_EXPORT int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  const std::uint64_t t1 = capture_clock().ticks();
  const int rc = PMPI_Init_thread(argc, argv, required, provided);
  const std::uint64_t t2 = capture_clock().ticks();
  return record_init(fn::Init_thread, t1, t2, rc, argc, required, provided);
}

extern "C" ENCORE_EXPORT int MPI_Finalize(void) {
  Recorder* rec = Recorder::get();
  if (!rec) return PMPI_Finalize();
  int rc = MPI_SUCCESS;
  FinalizeReport report;
  {
    Call c(fn::Finalize);
    if (!c.active()) return PMPI_Finalize();
    c.mark_pre_work();
    report = rec->before_finalize();
    c.begin();
    rc = PMPI_Finalize();
    c.end(rc);
  }
  rec->after_finalize(report);
  return rc;
}

extern "C" ENCORE_EXPORT int MPI_Abort(MPI_Comm comm, int errorcode) {
  if (Recorder* rec = Recorder::get()) {
    {
      Call c(fn::Abort);
      if (c.active()) {
        c.begin();
        c.end(MPI_SUCCESS);  // PMPI_Abort does not return: record the call before it
        c.put_comm(comm);
        c.put_int(errorcode);
      }
    }
    rec->finish(EndStatus::aborted);
  }
  return PMPI_Abort(comm, errorcode);
}

extern "C" ENCORE_EXPORT int MPI_Pcontrol(const int level, ...) {
  Call c(fn::Pcontrol);
  if (!c.active()) return PMPI_Pcontrol(level);
  c.begin();
  const int rc = PMPI_Pcontrol(level);
  c.end(rc);
  c.put_int(level);
  return rc;
}
