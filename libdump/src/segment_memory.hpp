// The memory a segment's bytes live in: anonymous mappings whose pages are faulted in when the
// segment is made, not when the application thread first writes them. A first touch costs a
// page fault (about 1.3 us a 4 KiB page on the VM this was measured on, 9 us when its host has
// to fault the page in too), and the thread that pays it is the one recording: halo2d's 4 KiB
// of payload an iteration cost it one fault an iteration. Segments of 2 MiB or more are
// aligned to 2 MiB and asked for transparent huge pages, which the kernel then populates a
// 2 MiB page at a time (about 0.2 us per 4 KiB when it can, as small pages when it cannot).
#pragma once

#include <cstddef>

namespace encore::dump {

inline constexpr std::size_t kHugePageBytes = std::size_t{2} << 20;

// Maps `bytes` (rounded up to whole pages) of zeroed memory, populated for writing if asked.
// Throws std::bad_alloc if the kernel refuses the mapping.
std::byte* map_segment_memory(std::size_t bytes, bool populate);
void unmap_segment_memory(std::byte* p, std::size_t bytes) noexcept;

// Whether every page of [p, p + bytes) is resident (mincore): what populating guarantees.
bool segment_memory_resident(const std::byte* p, std::size_t bytes);

}  // namespace encore::dump
