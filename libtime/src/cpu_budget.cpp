#include "encore/cpu_budget.hpp"

#include <sched.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>

namespace encore {
namespace {

namespace fs = std::filesystem;

// quota / period of one cgroup directory, or 0 if it sets none.
double limit_of(const fs::path& dir, bool v2) {
  double quota = -1, period = 0;
  if (v2) {
    std::ifstream in(dir / "cpu.max");
    std::string q;
    if (!(in >> q >> period) || q == "max") return 0;
    quota = std::stod(q);
  } else {
    std::ifstream q(dir / "cpu.cfs_quota_us"), p(dir / "cpu.cfs_period_us");
    if (!(q >> quota) || !(p >> period)) return 0;
  }
  return quota > 0 && period > 0 ? quota / period : 0;
}

}  // namespace

double cgroup_cpu_limit(const fs::path& root, const fs::path& dir, bool v2) noexcept {
  try {
    double lowest = 0;
    for (fs::path d = dir;; d = d.parent_path()) {
      if (const double l = limit_of(d, v2); l > 0) lowest = lowest > 0 ? std::min(lowest, l) : l;
      if (d == root || !d.has_relative_path() || d == d.parent_path()) break;
    }
    return lowest;
  } catch (...) {
    return 0;
  }
}

double cgroup_cpu_quota() noexcept {
  double lowest = 0;
  try {
    // "N:controllers:path" per hierarchy; v2's is "0::path".
    std::ifstream in("/proc/self/cgroup");
    std::string line;
    while (std::getline(in, line)) {
      const auto a = line.find(':'), b = line.find(':', a + 1);
      if (a == std::string::npos || b == std::string::npos) continue;
      const std::string controllers = line.substr(a + 1, b - a - 1);
      const fs::path rel = fs::path(line.substr(b + 1)).relative_path();
      double limit = 0;
      if (controllers.empty()) {
        const fs::path root = "/sys/fs/cgroup";
        limit = cgroup_cpu_limit(root, root / rel, true);
      } else {
        std::stringstream names(controllers);
        std::string name;
        bool has_cpu = false;
        while (std::getline(names, name, ',')) has_cpu |= name == "cpu";
        if (!has_cpu) continue;
        for (const fs::path& root :
             {fs::path("/sys/fs/cgroup") / controllers, fs::path("/sys/fs/cgroup/cpu")})
          if (fs::exists(root)) {
            limit = cgroup_cpu_limit(root, root / rel, false);
            break;
          }
      }
      if (limit > 0) lowest = lowest > 0 ? std::min(lowest, limit) : limit;
    }
  } catch (...) {
  }
  return lowest;
}

double usable_cpus() noexcept {
  double cpus = 1;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) cpus = CPU_COUNT(&set);
  if (const double quota = cgroup_cpu_quota(); quota > 0) cpus = std::min(cpus, quota);
  return std::max(cpus, 0.01);
}

}  // namespace encore
