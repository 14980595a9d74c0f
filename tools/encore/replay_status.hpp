// How a replayed program ended, as libreplay tells `encore replay` (ENCORE_REPLAY_STATUS: a file
// it writes at exit), and the exit code that follows from it.
#pragma once

#include <string>

namespace encore::tool {

// The replay's exit code when the program stopped short of its trace (doc/user-guide.md).
inline constexpr int kExitReplayStopped = 86;

// A temporary file for libreplay's one line: "finalized", "aborted", "failed" (it said why),
// "trace-ended" (the recorded rank ended there too), "early" (it exited before its trace
// ended, and said so). Empty: the program never started a replay (no MPI_Init).
class ReplayStatusFile {
 public:
  ReplayStatusFile();
  ~ReplayStatusFile();
  ReplayStatusFile(const ReplayStatusFile&) = delete;
  ReplayStatusFile& operator=(const ReplayStatusFile&) = delete;
  const std::string& path() const noexcept { return path_; }
  std::string read() const;

 private:
  std::string path_;
};

// `rc`, the program's exit code, unless the replay did not end as the trace did: then 86 where
// the program said 0 (a program that never called MPI_Init is named here).
int replay_exit_code(int rc, const std::string& status);

}  // namespace encore::tool
