#include <sched.h>

#include <fstream>

#include "temp_dir_test.hpp"
#include <gtest/gtest.h>

#include "encore/cpu_budget.hpp"

namespace encore {
namespace {

namespace fs = std::filesystem;

class CpuBudget : public TempDirTest {
 protected:
  void put(const fs::path& file, const std::string& text) {
    fs::create_directories(file.parent_path());
    std::ofstream(file) << text << "\n";
  }
};

TEST_F(CpuBudget, V1QuotaIsTheLowestOfTheCgroupAndItsParents) {
  const fs::path root = dir_ / "cpu";
  put(root / "cpu.cfs_quota_us", "-1");
  put(root / "cpu.cfs_period_us", "100000");
  put(root / "job/cpu.cfs_quota_us", "50000");
  put(root / "job/cpu.cfs_period_us", "100000");
  put(root / "job/step/cpu.cfs_quota_us", "150000");
  put(root / "job/step/cpu.cfs_period_us", "100000");
  EXPECT_DOUBLE_EQ(cgroup_cpu_limit(root, root / "job/step", false), 0.5);
  EXPECT_DOUBLE_EQ(cgroup_cpu_limit(root, root, false), 0.0);  // -1: no quota
}

TEST_F(CpuBudget, V2CpuMaxWithAndWithoutALimit) {
  const fs::path root = dir_ / "unified";
  put(root / "cpu.max", "max 100000");
  put(root / "a/cpu.max", "max 100000");
  put(root / "a/b/cpu.max", "20000 10000");
  EXPECT_DOUBLE_EQ(cgroup_cpu_limit(root, root / "a/b", true), 2.0);
  EXPECT_DOUBLE_EQ(cgroup_cpu_limit(root, root / "a", true), 0.0);
  EXPECT_DOUBLE_EQ(cgroup_cpu_limit(root, root / "missing/dir", true), 0.0);
}

TEST_F(CpuBudget, UsableCpusNeverExceedsTheAffinityMask) {
  cpu_set_t set;
  CPU_ZERO(&set);
  ASSERT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
  const double cpus = usable_cpus();
  EXPECT_GT(cpus, 0.0);
  EXPECT_LE(cpus, CPU_COUNT(&set));
}

}  // namespace
}  // namespace encore
