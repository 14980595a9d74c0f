// How much CPU this process may use at once. Capture and replay run helper threads (the trace
// writer, the payload read-ahead) only where that leaves a core beside the ranks; on a machine
// or a CPU-quota cgroup with no core to spare, a helper's work would be taken from the very
// program being timed.
#pragma once

#include <filesystem>

namespace encore {

// The CPUs in the affinity mask, lowered by the CPU quota of the process's cgroup or any
// cgroup above it (v2 `cpu.max`, v1 `cpu.cfs_quota_us` / `cpu.cfs_period_us`). At least a
// small positive number; never throws.
double usable_cpus() noexcept;

// The CPU quota of the process's cgroup or any cgroup above it, in CPUs (0.5: half a core), the
// lowest where several set one; 0 where none does. Never throws.
double cgroup_cpu_quota() noexcept;

// The quota part alone, for tests: the lowest quota / period of `dir` and its parents up to
// `root` (0 if none is set).
double cgroup_cpu_limit(const std::filesystem::path& root, const std::filesystem::path& dir,
                        bool v2) noexcept;

}  // namespace encore
