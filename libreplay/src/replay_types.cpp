#include "replay_types.hpp"

#include <cstring>
#include <stdexcept>
#include <string>

namespace encore::replay {
namespace {

// MPICH builtin datatypes carry their size in bits 8-15 of the handle.
constexpr std::uint32_t kBuiltinKind = 0x4c000000u;

bool builtin(MPI_Datatype t) {
  return (static_cast<std::uint32_t>(t) & 0xfc000000u) == kBuiltinKind;
}

struct Pair {
  MPI_Datatype type;
  std::int64_t size;
  MPI_Aint extent;
};
// MPICH's layouts of the MINLOC/MAXLOC pair types (struct {T value; int index}).
constexpr Pair kPairs[] = {
    {MPI_FLOAT_INT, 8, 8},   {MPI_DOUBLE_INT, 12, 16},        {MPI_LONG_INT, 12, 16},
    {MPI_SHORT_INT, 6, 8},   {MPI_LONG_DOUBLE_INT, 20, 32},
};

const Pair* pair(MPI_Datatype t) {
  for (const auto& p : kPairs)
    if (p.type == t) return &p;
  return nullptr;
}

[[noreturn]] void unknown(MPI_Datatype t) {
  throw std::runtime_error("datatype " + std::to_string(t) +
                           " is not known to the replay's datatype engine yet");
}

}  // namespace

std::int64_t Types::size(MPI_Datatype t) const {
  if (builtin(t)) return (static_cast<std::uint32_t>(t) >> 8) & 0xff;
  if (const Pair* p = pair(t)) return p->size;
  unknown(t);
}

MPI_Aint Types::extent(MPI_Datatype t) const {
  if (builtin(t)) return size(t);
  if (const Pair* p = pair(t)) return p->extent;
  unknown(t);
}

bool Types::contiguous(MPI_Datatype t) const { return builtin(t); }

void Types::unpack(std::span<const std::byte> packed, MPI_Count count, MPI_Datatype t,
                   void* buf) const {
  (void)count;
  if (builtin(t)) {
    std::memcpy(buf, packed.data(), packed.size());
    return;
  }
  unknown(t);
}

std::span<const std::byte> Types::pack(const void* buf, MPI_Count count, MPI_Datatype t,
                                       std::vector<std::byte>& scratch) const {
  (void)scratch;
  if (builtin(t))
    return {static_cast<const std::byte*>(buf), static_cast<std::size_t>(count * size(t))};
  unknown(t);
}

}  // namespace encore::replay
