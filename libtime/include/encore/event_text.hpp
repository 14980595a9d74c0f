// Human-readable rendering of decoded events: `encore show`, and the replay's divergence
// messages, which name both the recorded and the actual call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "encore/event.hpp"

namespace encore {

// "MPI_COMM_WORLD", "MPI_DOUBLE", "comm#1024", "MPI_COMM_NULL", "comm#?" (unknown).
std::string handle_name(HandleKind kind, std::int64_t id);

// "r0 t0 #15 MPI_Sendrecv  153.492483 ms +59.6us  sendcount=1000 ... recv 8000B hash=...".
std::string describe_event(std::uint32_t rank, const Event& ev);

// Just the arguments, extras and return code part.
std::string describe_args(const Event& ev);

// "59.6us", "850ns", "12.3ms", "1.23s".
std::string format_duration(std::uint64_t ns);
// "8000B", "7.8KiB", "1.2MiB".
std::string format_bytes(std::uint64_t bytes);
// Lines of "      0000  01 02 ...  |..|" for `bytes`, each prefixed by `indent`.
std::string hex_dump(std::span<const std::byte> bytes, std::string_view indent);

}  // namespace encore
