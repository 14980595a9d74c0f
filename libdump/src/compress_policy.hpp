// Deciding when a rank compresses its chunks (see CompressWhen).
#pragma once

#include "options.hpp"
#include <mpi.h>

namespace encore::dump {

// True if chunks are to be written raw during the run and packed at MPI_Finalize. For
// `automatic`, collective over `world`: every rank must call it.
bool compress_after_run(CompressWhen when, MPI_Comm world);

}  // namespace encore::dump
