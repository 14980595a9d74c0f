#include "block_program.hpp"

namespace encore::replay {

void append_piece(Program& out, Piece p, MPI_Aint shift) {
  if (p.bytes == 0) return;
  p.disp += shift;
  if (!out.empty() && !p.body && !out.back().body && p.count == 1) {
    Piece& q = out.back();
    if (q.count == 1 && q.disp + q.len == p.disp) {  // adjacent: one longer block
      q.len += p.len;
      q.bytes = q.len;
      return;
    }
    if (q.len == p.len) {  // another block of the same length: extend the strided leaf
      if (q.count == 1) {
        q.stride = p.disp - q.disp;
        q.count = 2;
        return;
      }
      if (p.disp == q.disp + q.count * q.stride) {
        ++q.count;
        return;
      }
    }
  }
  out.push_back(std::move(p));
}

void append_program(Program& out, const Program& p, MPI_Aint shift) {
  for (const Piece& piece : p) append_piece(out, piece, shift);
}

Program repeat_program(const Program& body, MPI_Aint count, MPI_Aint stride) {
  if (count <= 0 || body.empty()) return {};
  if (count == 1) return body;
  if (body.size() == 1) {
    const Piece& p = body[0];
    if (p.count == 1 && !p.body && p.len == stride)  // back to back: one block
      return single_block(p.disp, p.len * count);
    if (p.count == 1) {
      Piece r = p;
      r.count = count;
      r.stride = stride;
      return {r};
    }
    if (stride == p.count * p.stride) {  // the copies continue the piece's own stride
      Piece r = p;
      r.count = p.count * count;
      return {r};
    }
  }
  Piece r;
  r.count = count;
  r.stride = stride;
  r.body = std::make_shared<const Program>(body);
  r.bytes = program_bytes(body);
  return {r};
}

MPI_Aint program_bytes(const Program& p) noexcept {
  MPI_Aint n = 0;
  for (const Piece& piece : p) n += piece.bytes * piece.count;
  return n;
}

Program single_block(MPI_Aint disp, MPI_Aint bytes) {
  if (bytes <= 0) return {};
  Piece p;
  p.disp = disp;
  p.len = bytes;
  p.bytes = bytes;
  return {p};
}

}  // namespace encore::replay
