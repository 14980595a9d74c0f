// Where the data of one datatype element lives, precomputed once per type so that pack and
// unpack copy whole blocks instead of interpreting the type tree per basic element.
//
// A program is a list of pieces in type-signature order. A piece is either a leaf, `count`
// contiguous blocks of `len` bytes at disp, disp+stride, ..., or a repeated sub-program (`body`
// placed at disp + k*stride). Building merges adjacent blocks and folds equally spaced ones
// into a strided leaf, so a vector of doubles is a single piece whatever its count.
#pragma once

#include <algorithm>
#include <memory>
#include <vector>

#include <mpi.h>

namespace encore::replay {

struct Piece;
using Program = std::vector<Piece>;

struct Piece {
  MPI_Aint disp = 0;
  MPI_Aint len = 0;                     // leaf only: bytes of each block
  MPI_Aint count = 1;                   // repetitions, >= 1
  MPI_Aint stride = 0;                  // bytes between repetitions
  std::shared_ptr<const Program> body;  // null: a leaf
  MPI_Aint bytes = 0;                   // data bytes of one repetition
};

// Appends `p` moved by `shift` bytes, merging it into the last piece when possible.
void append_piece(Program& out, Piece p, MPI_Aint shift = 0);
void append_program(Program& out, const Program& p, MPI_Aint shift);
// `count` copies of `body`, copy k moved by k*stride.
Program repeat_program(const Program& body, MPI_Aint count, MPI_Aint stride);
MPI_Aint program_bytes(const Program& p) noexcept;
// One block of `bytes` bytes at `disp` (or nothing at all when bytes is 0).
Program single_block(MPI_Aint disp, MPI_Aint bytes);

// Calls f(offset, len) for `n` blocks of `len` bytes `stride` apart. The usual element sizes
// pass a constant len, so that f's copy of a strided column of doubles compiles to one move
// per block instead of a call into memcpy.
template <class F>
[[gnu::always_inline]] inline void for_each_strided(MPI_Aint start, MPI_Aint len, MPI_Aint n,
                                                    MPI_Aint stride, F& f) {
  switch (len) {
    case 4:
      for (MPI_Aint k = 0; k < n; ++k) f(start + k * stride, MPI_Aint{4});
      break;
    case 8:
      for (MPI_Aint k = 0; k < n; ++k) f(start + k * stride, MPI_Aint{8});
      break;
    case 16:
      for (MPI_Aint k = 0; k < n; ++k) f(start + k * stride, MPI_Aint{16});
      break;
    default:
      for (MPI_Aint k = 0; k < n; ++k) f(start + k * stride, len);
  }
}

// Calls f(offset, len) for each block of `prog` placed at `base`, in signature order, until
// `budget` bytes have been visited (the last block may be cut). Returns the unused budget.
template <class F>
MPI_Aint for_each_block(const Program& prog, MPI_Aint base, MPI_Aint budget, F& f) {
  for (const Piece& p : prog) {
    if (budget <= 0) break;
    const MPI_Aint start = base + p.disp;
    if (!p.body) {
      const MPI_Aint whole = std::min(p.count, budget / p.len);
      for_each_strided(start, p.len, whole, p.stride, f);
      budget -= whole * p.len;
      if (whole < p.count && budget > 0) {
        f(start + whole * p.stride, budget);
        budget = 0;
      }
    } else {
      for (MPI_Aint k = 0; k < p.count && budget > 0; ++k)
        budget = for_each_block(*p.body, start + k * p.stride, budget, f);
    }
  }
  return budget;
}

}  // namespace encore::replay
