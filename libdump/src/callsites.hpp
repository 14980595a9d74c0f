// Call sites: where in the program each MPI call was made. The stack is taken with libunwind's
// fast unw_backtrace, our own frames are dropped, and each distinct list of return addresses
// gets a small id. At MPI_Finalize the table is written next to the rank's streams
// (rank-NNNNN.callsites.json), each frame as module + offset (stable across runs with ASLR),
// with function+offset where the dynamic symbol table knows it. File:line needs the program's
// debug info and is resolved by the tool (addr2line), not in the program.
#pragma once

#include <cstdint>
#include <filesystem>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace encore::dump {

class CallSites {
 public:
  explicit CallSites(int depth) : depth_(depth) {}

  // The id of the calling stack (frames above libencore-dump), new ids from 0 on.
  std::uint32_t current();
  void write(const std::filesystem::path& file) const;

 private:
  struct Hash {
    std::size_t operator()(const std::vector<std::uintptr_t>& v) const noexcept;
  };
  int depth_;
  mutable std::mutex mu_;
  std::unordered_map<std::vector<std::uintptr_t>, std::uint32_t, Hash> ids_;
  std::vector<const std::vector<std::uintptr_t>*> by_id_;
};

}  // namespace encore::dump
