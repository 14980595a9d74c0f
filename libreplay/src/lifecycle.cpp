// The calls written by hand: MPI_Init starts the replay, MPI_Finalize ends it, MPI_Abort exits
// as the recorded run did; the time and state queries may come before MPI_Init or after
// MPI_Finalize, where nothing was recorded.
#include <time.h>

#include <cstdio>
#include <cstdlib>

#include "replay_attributes.hpp"
#include "step.hpp"
#include <mpi.h>

using namespace encore;
using namespace encore::replay;

#define ENCORE_EXPORT __attribute__((visibility("default")))
#define ENCORE_ALIAS(name) __attribute__((alias(#name)))

namespace {

double now_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

bool replaying() {
  const Replayer* r = Replayer::get();
  return r && !r->finished();
}

}  // namespace

extern "C" ENCORE_EXPORT int MPI_Init(int* argc, char*** argv) {
  (void)argc;
  (void)argv;
  Replayer::start();
  Step s(fn::Init);
  s.check();
  return s.rc();  // argc/argv stay the program's: the recorded values are another process's
}

extern "C" ENCORE_EXPORT int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  (void)argc;
  (void)argv;
  Replayer::start();
  Step s(fn::Init_thread);
  s.in_value(2, required);
  s.check();
  if (s.ok()) {
    s.out_value(3, provided);
    if (provided && *provided == MPI_THREAD_MULTIPLE) Replayer::get()->set_thread_multiple();
  }
  return s.rc();
}

extern "C" ENCORE_EXPORT int MPI_Finalize(void) {
  int rc = MPI_SUCCESS;
  {
    Step s(fn::Finalize);
    s.check();
    if (s.ok()) rattr::finalize();  // MPI_COMM_SELF's delete callbacks, then MPI_COMM_WORLD's
    rc = s.rc();
  }
  Replayer& r = *Replayer::get();
  r.finish();
  if (r.send_mismatches() > 0) {
    std::fprintf(stderr, "encore replay: %llu sends differed from the recorded run\n",
                 static_cast<unsigned long long>(r.send_mismatches()));
  }
  if (r.contribution_mismatches() > 0) {
    std::fprintf(stderr,
                 "encore replay: %llu collective contributions differed from the recorded run\n",
                 static_cast<unsigned long long>(r.contribution_mismatches()));
  }
  return rc;
}

extern "C" ENCORE_EXPORT int MPI_Abort(MPI_Comm comm, int errorcode) {
  if (replaying()) {
    Step s(fn::Abort);
    s.in_comm(0, comm);
    s.in_value(1, errorcode);
    s.check();
  }
  if (Replayer* r = Replayer::get()) {
    r->note_abort();
    if (r->profile()) r->profile()->close(RankStatus::aborted);
  }
  std::fflush(nullptr);
  std::fprintf(stderr, "encore replay: the program called MPI_Abort(%d), as recorded\n", errorcode);
  std::exit(errorcode);
}

extern "C" ENCORE_EXPORT int MPI_Pcontrol(const int level, ...) {
  Step s(fn::Pcontrol);
  s.in_value(0, level);
  s.check();
  return s.rc();
}

extern "C" ENCORE_EXPORT int MPI_Initialized(int* flag) {
  if (!replaying()) {
    *flag = Replayer::get() != nullptr;
    return MPI_SUCCESS;
  }
  Step s(fn::Initialized);
  s.check();
  if (s.ok()) s.out_value(0, flag);
  return s.rc();
}

extern "C" ENCORE_EXPORT int MPI_Finalized(int* flag) {
  if (!replaying()) {
    *flag = Replayer::get() != nullptr && Replayer::get()->finished();
    return MPI_SUCCESS;
  }
  Step s(fn::Finalized);
  s.check();
  if (s.ok()) s.out_value(0, flag);
  return s.rc();
}

extern "C" ENCORE_EXPORT double MPI_Wtime(void) {
  if (!replaying()) return now_seconds();
  Step s(fn::Wtime);
  s.check();
  // This machine's clock by default (the replay measures its own run); the recorded values
  // with ENCORE_REPLAY_WTIME=recorded, so that programs printing timings print the same.
  return s.replayer().options().wtime_recorded ? s.ret_double() : now_seconds();
}

extern "C" ENCORE_EXPORT double MPI_Wtick(void) {
  if (!replaying()) return 1e-9;
  Step s(fn::Wtick);
  s.check();
  return s.ret_double();
}

extern "C" ENCORE_EXPORT int PMPI_Init(int*, char***) ENCORE_ALIAS(MPI_Init);
extern "C" ENCORE_EXPORT int PMPI_Init_thread(int*, char***, int, int*)
    ENCORE_ALIAS(MPI_Init_thread);
extern "C" ENCORE_EXPORT int PMPI_Finalize(void) ENCORE_ALIAS(MPI_Finalize);
extern "C" ENCORE_EXPORT int PMPI_Abort(MPI_Comm, int) ENCORE_ALIAS(MPI_Abort);
extern "C" ENCORE_EXPORT int PMPI_Pcontrol(const int, ...) ENCORE_ALIAS(MPI_Pcontrol);
extern "C" ENCORE_EXPORT int PMPI_Initialized(int*) ENCORE_ALIAS(MPI_Initialized);
extern "C" ENCORE_EXPORT int PMPI_Finalized(int*) ENCORE_ALIAS(MPI_Finalized);
extern "C" ENCORE_EXPORT double PMPI_Wtime(void) ENCORE_ALIAS(MPI_Wtime);
extern "C" ENCORE_EXPORT double PMPI_Wtick(void) ENCORE_ALIAS(MPI_Wtick);
