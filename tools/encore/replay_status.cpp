#include "replay_status.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <vector>

#include "common.hpp"

#include "encore/error.hpp"

namespace encore::tool {

ReplayStatusFile::ReplayStatusFile() {
  const char* dir = std::getenv("TMPDIR");
  std::string name = std::string(dir && *dir ? dir : "/tmp") + "/encore-replay-status-XXXXXX";
  std::vector<char> buf(name.begin(), name.end());
  buf.push_back('\0');
  const int fd = ::mkstemp(buf.data());
  if (fd < 0) throw ExitError(kExitUsage, name + ": cannot create: " + errno_text(errno));
  ::close(fd);
  path_ = buf.data();
}

ReplayStatusFile::~ReplayStatusFile() { ::unlink(path_.c_str()); }

std::string ReplayStatusFile::read() const {
  std::ifstream in(path_);
  std::string line;
  std::getline(in, line);
  return line;
}

int replay_exit_code(int rc, const std::string& status) {
  if (status == "early") return rc == 0 ? kExitReplayStopped : rc;
  // Only where the program said all went well: anything else (a signal, libreplay's own
  // option errors before a replay starts) has said why already.
  if (status.empty() && rc == 0) {
    std::fprintf(stderr,
                 "encore replay: the program exited without calling MPI_Init: not the recorded "
                 "MPI program, or one that does not load libmpich dynamically\n");
    return kExitReplayStopped;
  }
  return rc;
}

}  // namespace encore::tool
