// Crash tolerance beyond the periodic flush: on a fatal signal or a fatal MPI error the committed
// but unflushed bytes are written (best effort, raw chunks, no allocation), and a program that
// exits without MPI_Finalize still gets its trailers.
#pragma once

namespace encore::dump {

void install_crash_guard();
// MPI_COMM_WORLD and MPI_COMM_SELF, where their handler is MPI_ERRORS_ARE_FATAL, get one that
// flushes the trace before it aborts as MPICH does (communicators made from them inherit it).
// MPI_Comm_get_errhandler then returns it, not MPI_ERRORS_ARE_FATAL.
void install_fatal_error_handler();

}  // namespace encore::dump
