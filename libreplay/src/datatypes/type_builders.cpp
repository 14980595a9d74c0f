#include "type_builders.hpp"

#include <algorithm>
#include <vector>

namespace encore::replay {
namespace {

using U64 = std::uint64_t;

// Any type with the null yaksa type MPICH gives zero-length types.
constexpr std::uintptr_t kYaksaNull = 1;
constexpr std::uintptr_t kPredefinedTag = std::uintptr_t{1} << 63;

// yaksa's bounds of `count` elements of `o` placed at `disp` (hindexed, struct).
void block_lb_ub(MPI_Aint count, MPI_Aint disp, const Bounds& o, MPI_Aint& lb, MPI_Aint& ub) {
  if (o.extent() > 0) {
    lb = disp + o.lb;
    ub = disp + o.ub + o.extent() * (count - 1);
  } else {
    lb = disp + o.lb + o.extent() * (count - 1);
    ub = disp + o.ub;
  }
}

// True bounds follow the bounds by the old type's offsets, as yaksa computes them.
void set_true_bounds(Bounds& b, const Bounds& o) {
  b.true_lb = b.lb + (o.true_lb - o.lb);
  b.true_ub = b.ub + (o.true_ub - o.ub);
}

NewNode derived_from(const TypeNode& old, MPI_Count size, bool same_yaksa_type) {
  auto n = std::make_shared<TypeNode>();
  n->bounds.size = size;
  n->bounds.align = old.bounds.align;
  if (same_yaksa_type) n->yaksa_id = old.identity();
  return n;
}

}  // namespace

NewNode build_predefined(const Predefined& p) {
  auto n = std::make_shared<TypeNode>();
  n->predefined = &p;
  n->bounds = {p.size, 0, p.extent, 0, p.true_ub, p.align};
  n->yaksa_id = kPredefinedTag | static_cast<std::uint32_t>(yaksa_representative(p.handle));
  for (int i = 0; i < 2; ++i) {
    if (p.parts[i] == MPI_DATATYPE_NULL) continue;
    append_program(n->program, single_block(p.part_offset[i], find_predefined(p.parts[i])->size),
                   0);
  }
  n->signature = predefined_signature(p.handle);
  return n;
}

NewNode build_zerolen() {
  auto n = std::make_shared<TypeNode>();
  n->yaksa_id = kYaksaNull;
  return n;
}

NewNode build_contiguous(MPI_Aint count, const TypeNode& old) {
  if (count == 0) return build_zerolen();
  const Bounds& o = old.bounds;
  auto n = derived_from(old, o.size * count, count == 1);
  Bounds& b = n->bounds;
  if (o.extent() > 0) {
    b.lb = o.lb;
    b.ub = o.ub + (count - 1) * o.extent();
  } else {
    b.lb = o.lb + (count - 1) * o.extent();
    b.ub = o.ub;
  }
  set_true_bounds(b, o);
  n->program = repeat_program(old.program, count, o.extent());
  n->signature = repeat_signature(old.signature, static_cast<U64>(count));
  return n;
}

NewNode build_vector(MPI_Aint count, MPI_Aint blocklength, MPI_Aint stride, bool stride_in_bytes,
                     const TypeNode& old) {
  if (count == 0) return build_zerolen();
  const Bounds& o = old.bounds;
  const MPI_Aint ext = o.extent();
  const MPI_Aint bytes = stride_in_bytes ? stride : stride * ext;
  auto n = derived_from(old, o.size * count * blocklength, count == 1 && blocklength == 1);
  Bounds& b = n->bounds;
  // yaksi_type_create_hvector (a vector is an hvector of stride*extent); no special case for
  // empty blocks, so blocklength 0 pulls the upper bound back by one extent.
  b.lb = o.lb + (bytes < 0 ? bytes * (count - 1) : 0) + (ext < 0 ? ext * (blocklength - 1) : 0);
  b.ub = o.ub + (bytes > 0 ? bytes * (count - 1) : 0) + (ext > 0 ? ext * (blocklength - 1) : 0);
  set_true_bounds(b, o);
  const Program block = repeat_program(old.program, blocklength, ext);
  n->program = repeat_program(block, count, bytes);
  n->signature = repeat_signature(old.signature, static_cast<U64>(count * blocklength));
  return n;
}

NewNode build_blockindexed(MPI_Aint count, MPI_Aint blocklength, const MPI_Aint* disps,
                           bool disps_in_bytes, const TypeNode& old) {
  if (count == 0) return build_zerolen();
  const Bounds& o = old.bounds;
  const MPI_Aint ext = o.extent();
  const auto byte_disp = [&](MPI_Aint i) { return disps_in_bytes ? disps[i] : disps[i] * ext; };
  auto n = derived_from(old, o.size * count * blocklength,
                        count == 1 && blocklength == 1 && byte_disp(0) == 0);
  Bounds& b = n->bounds;
  MPI_Aint lo = byte_disp(0), hi = lo;
  const Program block = repeat_program(old.program, blocklength, ext);
  for (MPI_Aint i = 0; i < count; ++i) {
    lo = std::min(lo, byte_disp(i));
    hi = std::max(hi, byte_disp(i));
    append_program(n->program, block, byte_disp(i));
  }
  // yaksi_type_create_hindexed_block: every block counts, even an empty one.
  if (ext > 0) {
    b.lb = lo + o.lb;
    b.ub = hi + o.ub + ext * (blocklength - 1);
  } else {
    b.lb = lo + o.lb + ext * (blocklength - 1);
    b.ub = hi + o.ub;
  }
  set_true_bounds(b, o);
  n->signature = repeat_signature(old.signature, static_cast<U64>(count * blocklength));
  return n;
}

NewNode build_indexed(MPI_Aint count, const MPI_Aint* blocklengths, const MPI_Aint* disps,
                      bool disps_in_bytes, const TypeNode& old) {
  MPI_Aint total = 0;
  for (MPI_Aint i = 0; i < count; ++i) total += blocklengths[i];
  if (total == 0) return build_zerolen();  // MPICH: count 0 or only empty blocks
  const Bounds& o = old.bounds;
  const MPI_Aint ext = o.extent();
  const auto byte_disp = [&](MPI_Aint i) { return disps_in_bytes ? disps[i] : disps[i] * ext; };
  auto n =
      derived_from(old, o.size * total, count == 1 && blocklengths[0] == 1 && byte_disp(0) == 0);
  Bounds& b = n->bounds;
  bool first = true;
  for (MPI_Aint i = 0; i < count; ++i) {
    if (blocklengths[i] == 0) continue;  // empty blocks do not move the bounds
    MPI_Aint lb = 0, ub = 0;
    block_lb_ub(blocklengths[i], byte_disp(i), o, lb, ub);
    b.lb = first ? lb : std::min(b.lb, lb);
    b.ub = first ? ub : std::max(b.ub, ub);
    first = false;
    append_program(n->program, repeat_program(old.program, blocklengths[i], ext), byte_disp(i));
  }
  set_true_bounds(b, o);
  n->signature = repeat_signature(old.signature, static_cast<U64>(total));
  return n;
}

namespace {

// yaksi_type_create_struct for entries without MPI_LB / MPI_UB.
NewNode plain_struct(const std::vector<MPI_Aint>& bls, const std::vector<MPI_Aint>& disps,
                     const std::vector<const TypeNode*>& types) {
  const std::size_t count = bls.size();
  if (std::all_of(bls.begin(), bls.end(), [](MPI_Aint v) { return v == 0; }))
    return build_zerolen();
  // All entries the same yaksa type: yaksa builds an hindexed, which is not padded.
  const bool hindexed = std::all_of(types.begin(), types.end(), [&](const TypeNode* t) {
    return t->identity() == types[0]->identity();
  });
  auto n = std::make_shared<TypeNode>();
  if (hindexed && count == 1 && bls[0] == 1 && disps[0] == 0) n->yaksa_id = types[0]->identity();
  Bounds& b = n->bounds;
  b.align = hindexed ? types[0]->bounds.align : 0;
  SignatureBuilder sig;
  bool first = true;
  for (std::size_t i = 0; i < count; ++i) {
    if (bls[i] == 0) continue;
    const TypeNode& t = *types[i];
    const Bounds& o = t.bounds;
    b.align = std::max(b.align, o.align);
    MPI_Aint lb = 0, ub = 0;
    block_lb_ub(bls[i], disps[i], o, lb, ub);
    const MPI_Aint true_lb = lb + (o.true_lb - o.lb), true_ub = ub + (o.true_ub - o.ub);
    b.lb = first ? lb : std::min(b.lb, lb);
    b.ub = first ? ub : std::max(b.ub, ub);
    b.true_lb = first ? true_lb : std::min(b.true_lb, true_lb);
    b.true_ub = first ? true_ub : std::max(b.true_ub, true_ub);
    first = false;
    b.size += o.size * bls[i];
    append_program(n->program, repeat_program(t.program, bls[i], o.extent()), disps[i]);
    sig.add(t.signature, static_cast<U64>(bls[i]));
  }
  // Pad the extent to the alignment, as a C compiler pads a struct (C '%': may be negative).
  if (!hindexed && b.align > 0) {
    const MPI_Aint diff = b.extent() % b.align;
    if (diff != 0) b.ub += b.align - diff;
  }
  n->signature = sig.build();
  return n;
}

}  // namespace

NewNode build_struct(MPI_Aint count, const MPI_Aint* blocklengths, const MPI_Aint* disps,
                     const TypeNode* const* types) {
  if (count == 0) return build_zerolen();
  std::vector<MPI_Aint> bls, ds;
  std::vector<const TypeNode*> ts;
  bool markers = false;
  for (MPI_Aint i = 0; i < count; ++i) {
    const Predefined* p = types[i]->predefined;
    if (p && (p->handle == MPI_LB || p->handle == MPI_UB)) {
      markers = true;
      continue;
    }
    bls.push_back(blocklengths[i]);
    ds.push_back(disps[i]);
    ts.push_back(types[i]);
  }
  NewNode inner = bls.empty() ? build_zerolen() : plain_struct(bls, ds, ts);
  if (!markers) return inner;
  MPI_Aint lb = inner->bounds.lb, ub = inner->bounds.ub;
  for (MPI_Aint i = 0; i < count; ++i) {
    const Predefined* p = types[i]->predefined;
    if (p && p->handle == MPI_LB) lb = disps[i];
    if (p && p->handle == MPI_UB) ub = disps[i];
  }
  return build_resized(*inner, lb, ub - lb);
}

NewNode build_resized(const TypeNode& old, MPI_Aint lb, MPI_Aint extent) {
  const bool same = lb == old.bounds.lb && extent == old.bounds.extent();
  auto n = derived_from(old, old.bounds.size, same);
  n->bounds.lb = lb;
  n->bounds.ub = lb + extent;
  n->bounds.true_lb = old.bounds.true_lb;
  n->bounds.true_ub = old.bounds.true_ub;
  n->program = old.program;
  n->signature = old.signature;
  return n;
}

NewNode build_dup(const TypeNode& old) {
  auto n = std::make_shared<TypeNode>();
  n->bounds = old.bounds;
  n->yaksa_id = old.identity();
  n->program = old.program;
  n->signature = old.signature;
  return n;
}

}  // namespace encore::replay
