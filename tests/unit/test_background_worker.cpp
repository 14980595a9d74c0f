#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "encore/background_worker.hpp"

namespace encore {
namespace {

using Taken = BackgroundWorker::Taken;

bool blocked(int sig) {
  sigset_t now;
  pthread_sigmask(SIG_BLOCK, nullptr, &now);
  return sigismember(&now, sig) == 1;
}

TEST(BackgroundWorker, RunsEachPostedJobOnItsThreadAndHandsTheResultBack) {
  BackgroundWorker w;
  int input = 0, output = 0;  // plain fields: the post/take hand-over orders them
  std::thread::id ran_on;
  ASSERT_TRUE(w.start("test-worker", [&] {
    output = input * 2;
    ran_on = std::this_thread::get_id();
  }));
  EXPECT_TRUE(w.started());
  EXPECT_EQ(w.take(), Taken::none);  // nothing posted yet
  for (int i = 1; i <= 50; ++i) {
    input = i;
    w.post();
    // Until the thread has run it, the job is either still there or taken back undone.
    const Taken t = w.take();
    if (t == Taken::not_started) {
      output = input * 2;  // the owner does it
    } else {
      ASSERT_EQ(t, Taken::done);
      EXPECT_NE(ran_on, std::this_thread::get_id());
    }
    EXPECT_EQ(output, 2 * i);
    EXPECT_FALSE(w.busy());
  }
  w.stop();
  EXPECT_FALSE(w.started());
  w.stop();  // idempotent
}

TEST(BackgroundWorker, BusyWhileTheJobRunsAndTakeWaitsForIt) {
  BackgroundWorker w;
  std::mutex m;
  std::condition_variable cv;
  bool started = false, release = false;
  ASSERT_TRUE(w.start("test-busy", [&] {
    std::unique_lock lock(m);
    started = true;
    cv.notify_all();
    cv.wait(lock, [&] { return release; });
  }));
  w.post();
  EXPECT_TRUE(w.busy());
  {
    std::unique_lock lock(m);
    cv.wait(lock, [&] { return started; });
  }
  EXPECT_TRUE(w.busy());  // running: a take() now would wait
  std::thread releaser([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const std::lock_guard lock(m);
    release = true;
    cv.notify_all();
  });
  EXPECT_EQ(w.take(), Taken::done);
  releaser.join();
  EXPECT_FALSE(w.busy());
}

TEST(BackgroundWorker, StopWithAJobPendingLeavesItToTheOwner) {
  std::atomic<int> runs = 0;
  for (int round = 0; round < 20; ++round) {
    BackgroundWorker w;
    ASSERT_TRUE(w.start("test-stop", [&] { ++runs; }));
    const int before = runs;
    w.post();
    w.stop();  // joins: returns whether or not the thread got to the job
    EXPECT_FALSE(w.started());
    const Taken t = w.take();
    ASSERT_TRUE(t == Taken::done || t == Taken::not_started)
        << "a posted job is either done or handed back";
    EXPECT_EQ(runs, t == Taken::done ? before + 1 : before);
  }
  // Destroyed with a job pending and never stopped explicitly: the destructor joins.
  BackgroundWorker w;
  ASSERT_TRUE(w.start("test-dtor", [&] { ++runs; }));
  w.post();
}

TEST(BackgroundWorker, ThreadIsNamedAndHasEverySignalBlocked) {
  ASSERT_FALSE(blocked(SIGUSR1));  // the test's own thread
  BackgroundWorker w;
  char name[32] = {};
  bool usr1 = false, term = false, intr = false;
  ASSERT_TRUE(w.start("encore-a-very-long-name", [&] {
    pthread_getname_np(pthread_self(), name, sizeof name);
    usr1 = blocked(SIGUSR1);
    term = blocked(SIGTERM);
    intr = blocked(SIGINT);
  }));
  EXPECT_FALSE(blocked(SIGUSR1)) << "the caller's mask is restored";
  w.post();
  while (w.busy()) std::this_thread::sleep_for(std::chrono::milliseconds(1));  // on the thread
  ASSERT_EQ(w.take(), Taken::done);
  EXPECT_STREQ(name, "encore-a-very-l");  // the kernel's 15 characters
  EXPECT_TRUE(usr1);
  EXPECT_TRUE(term);
  EXPECT_TRUE(intr);
}

TEST(BackgroundWorker, WithoutAThreadEveryJobIsTheOwners) {
  BackgroundWorker w;  // never started
  EXPECT_FALSE(w.started());
  w.post();
  EXPECT_EQ(w.take(), Taken::not_started);
  w.stop();
}

}  // namespace
}  // namespace encore
