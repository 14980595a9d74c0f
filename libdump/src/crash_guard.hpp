// Crash tolerance beyond the periodic flush: on a fatal signal the committed but unflushed
// bytes are written (best effort, raw chunks, no allocation), and a program that exits without
// MPI_Finalize still gets its trailers.
#pragma once

namespace encore::dump {

void install_crash_guard();

}  // namespace encore::dump
