#include "crash_guard.hpp"

#include <signal.h>

#include <cstdio>
#include <cstdlib>

#include "recorder.hpp"
#include <mpi.h>

namespace encore::dump {
namespace {

constexpr int kSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTERM, SIGINT};
struct sigaction previous[sizeof kSignals / sizeof kSignals[0]];

void on_fatal_signal(int sig) {
  if (Recorder* rec = Recorder::get(); rec && rec->writer) rec->writer->emergency_flush();
  // Hand the signal to whoever had it before (MPICH, UCX or the default action).
  for (std::size_t i = 0; i < sizeof kSignals / sizeof kSignals[0]; ++i) {
    if (kSignals[i] == sig) sigaction(sig, &previous[i], nullptr);
  }
  raise(sig);
}

void on_exit() {
  if (Recorder* rec = Recorder::get()) rec->finish(EndStatus::exited);
}

// MPI_ERRORS_ARE_FATAL, with the trace flushed first: MPICH's own fatal handler aborts through
// its process manager and then waits to be killed (SIGKILL), so nothing of the trace since the
// last periodic flush would be written. Says what MPICH says, then aborts as it does.
void on_fatal_mpi_error(MPI_Comm* comm, int* code, ...) {
  if (Recorder* rec = Recorder::get(); rec && rec->writer) rec->writer->emergency_flush();
  char text[MPI_MAX_ERROR_STRING] = "";
  int len = 0;
  PMPI_Error_string(code ? *code : MPI_ERR_OTHER, text, &len);
  int rank = -1;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::fprintf(stderr,
               "Fatal error on rank %d (MPI_ERRORS_ARE_FATAL; the Encore trace was "
               "flushed): %s\n",
               rank, text);
  std::fflush(stderr);
  PMPI_Abort(comm ? *comm : MPI_COMM_WORLD, code ? *code : MPI_ERR_OTHER);
}

}  // namespace

void install_fatal_error_handler() {
  MPI_Errhandler handler = MPI_ERRHANDLER_NULL;
  if (PMPI_Comm_create_errhandler(on_fatal_mpi_error, &handler) != MPI_SUCCESS) return;
  for (MPI_Comm c : {MPI_COMM_WORLD, MPI_COMM_SELF}) {
    MPI_Errhandler current = MPI_ERRHANDLER_NULL;
    if (PMPI_Comm_get_errhandler(c, &current) != MPI_SUCCESS) continue;
    if (current == MPI_ERRORS_ARE_FATAL) PMPI_Comm_set_errhandler(c, handler);
    if (current != MPI_ERRHANDLER_NULL && current != MPI_ERRORS_ARE_FATAL &&
        current != MPI_ERRORS_RETURN)
      PMPI_Errhandler_free(&current);
  }
  PMPI_Errhandler_free(&handler);  // the communicators keep it
}

void install_crash_guard() {
  struct sigaction sa {};
  sa.sa_handler = on_fatal_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND;
  for (std::size_t i = 0; i < sizeof kSignals / sizeof kSignals[0]; ++i) {
    sigaction(kSignals[i], &sa, &previous[i]);
  }
  std::atexit(on_exit);
}

}  // namespace encore::dump
