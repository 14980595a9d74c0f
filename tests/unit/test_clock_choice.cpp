// Choosing the capture's clock (clock_choice.hpp): the names ENCORE_CLOCK takes, the choices
// made as asked, and the TSC check, which must leave the thread's CPU affinity as it was.
#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <regex>
#include <string>

#include <gtest/gtest.h>

#include "encore/clock_choice.hpp"

namespace encore {
namespace {

TEST(ClockChoice, NamesAreTheOptionsValues) {
  EXPECT_EQ(parse_clock_choice("auto"), ClockChoice::automatic);
  EXPECT_EQ(parse_clock_choice("tsc"), ClockChoice::tsc);
  EXPECT_EQ(parse_clock_choice("monotonic"), ClockChoice::monotonic);
  EXPECT_FALSE(parse_clock_choice("TSC"));
  EXPECT_FALSE(parse_clock_choice(""));
  EXPECT_FALSE(parse_clock_choice("monotonic "));
}

TEST(ClockChoice, AsAsked) {
  const ClockDecision mono = choose_clock(ClockChoice::monotonic);
  EXPECT_EQ(mono.source, ClockSource::monotonic);
  EXPECT_EQ(mono.why, "CLOCK_MONOTONIC as asked");
#if defined(__x86_64__)
  const ClockDecision tsc = choose_clock(ClockChoice::tsc);
  EXPECT_EQ(tsc.source, ClockSource::tsc);
  EXPECT_EQ(tsc.why, "the TSC as asked, unchecked");
#endif
}

TEST(ClockChoice, AutoFollowsTheKernelOrTheCheck) {
  const ClockDecision d = choose_clock(ClockChoice::automatic);
  ASSERT_FALSE(d.why.empty());
  if (tsc_is_reliable()) {
    EXPECT_EQ(d.source, ClockSource::tsc);
  } else if (!tsc_is_invariant()) {
    EXPECT_EQ(d.source, ClockSource::monotonic) << d.why;
  } else {
    // The check's line; and where the same check, a moment later, finds the TSC in step, auto
    // took it.
    std::string detail;
    const bool in_step = tsc_in_step(detail);
    EXPECT_NE(d.why.find("TSC against CLOCK_MONOTONIC on "), std::string::npos) << d.why;
    if (in_step) {
      EXPECT_EQ(d.source, ClockSource::tsc) << d.why << " / " << detail;
    }
  }
}

TEST(ClockChoice, EnvironmentValuesAndTheirFallback) {
  ::setenv("ENCORE_CLOCK", "monotonic", 1);
  EXPECT_EQ(choose_clock_from_environment().source, ClockSource::monotonic);
  ::setenv("ENCORE_CLOCK", "sundial", 1);
  testing::internal::CaptureStderr();
  const ClockDecision d = choose_clock_from_environment();
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(err, "encore: ignoring ENCORE_CLOCK=sundial (auto, tsc or monotonic)\n");
  EXPECT_EQ(d.why.find("as asked"), std::string::npos) << d.why;
  ::unsetenv("ENCORE_CLOCK");
}

#if defined(__x86_64__)
// The check visits every CPU of the mask, and restores the mask: a thread pinned to one CPU
// stays there, one allowed on all stays allowed on all.
TEST(ClockChoice, TheCheckRestoresTheAffinityAndNamesEveryCpu) {
  cpu_set_t start;
  CPU_ZERO(&start);
  ASSERT_EQ(sched_getaffinity(0, sizeof start, &start), 0);
  const int ncpus = CPU_COUNT(&start);
  int first = 0;
  while (!CPU_ISSET(first, &start)) ++first;

  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
  std::string detail;
  tsc_in_step(detail);
  cpu_set_t after;
  CPU_ZERO(&after);
  ASSERT_EQ(sched_getaffinity(0, sizeof after, &after), 0);
  EXPECT_TRUE(CPU_EQUAL(&after, &one));
  EXPECT_NE(detail.find(" on 1 CPU: "), std::string::npos) << detail;

  ASSERT_EQ(sched_setaffinity(0, sizeof start, &start), 0);
  tsc_in_step(detail);
  CPU_ZERO(&after);
  ASSERT_EQ(sched_getaffinity(0, sizeof after, &after), 0);
  EXPECT_TRUE(CPU_EQUAL(&after, &start));
  const std::regex form(
      R"(TSC against CLOCK_MONOTONIC on (\d+) CPUs?: at most \d+ ns apart \(CPU \d+\))");
  std::smatch m;
  ASSERT_TRUE(std::regex_match(detail, m, form)) << detail;
  EXPECT_EQ(std::stoi(m[1]), std::min(ncpus, kMaxCpusChecked));
}
#endif

}  // namespace
}  // namespace encore
