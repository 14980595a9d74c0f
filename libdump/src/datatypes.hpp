// What capture needs to know about a datatype: its stable id, its size and layout (to copy
// contiguous data directly and pack the rest), and its element-size signature (so a reader on
// a machine of the other byte order can convert the payload).
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "handle_ids.hpp"
#include <mpi.h>

#include "encore/byte_order.hpp"

namespace encore::dump {

struct TypeInfo {
  std::uint32_t id = 0;
  std::int64_t size = 0;  // bytes of data in one element
  MPI_Aint extent = 0;
  MPI_Aint true_lb = 0;
  bool contiguous = false;  // one element is `size` bytes at true_lb, elements back to back
  bool signature_written = false;
  bool light_copy = false;  // contiguous and signature_written: a receive copies it as it is
  std::vector<SignatureRun> signature;  // empty: unknown
};

class Datatypes {
 public:
  Datatypes() : ids_(HandleKind::datatype) {}

  std::uint32_t id(MPI_Datatype dt) const noexcept { return ids_.lookup(dt); }
  std::uint32_t create(MPI_Datatype dt) { return ids_.create(dt); }
  std::uint32_t release(MPI_Datatype dt) {
    info_.erase(dt);
    recent_[HandleIds::slot(dt)] = {};
    if (last_.type == dt) last_ = {};
    return ids_.release(dt);
  }
  // Layout and signature, computed on first use. The last type asked for is checked first.
  TypeInfo& info(MPI_Datatype dt) {
    if (last_.type == dt && last_.info) [[likely]]
      return *last_.info;
    const Recent& r = recent_[HandleIds::slot(dt)];
    if (r.info && r.type == dt) {
      last_ = r;
      return *r.info;
    }
    return info_slow(dt);
  }

 private:
  struct Recent {
    MPI_Datatype type = MPI_DATATYPE_NULL;
    TypeInfo* info = nullptr;
  };
  TypeInfo& info_slow(MPI_Datatype dt);

  HandleIds ids_;
  std::unordered_map<MPI_Datatype, TypeInfo> info_;  // node-based: pointers stay valid
  Recent recent_[HandleIds::kCacheSlots];            // direct-mapped, as HandleIds
  Recent last_;                                      // the last type recent_ found
};

// The element-size signature of `dt` (empty if it cannot be determined).
std::vector<SignatureRun> type_signature(MPI_Datatype dt);

}  // namespace encore::dump
