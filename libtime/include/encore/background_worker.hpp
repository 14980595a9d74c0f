// A helper thread that runs one job at a time for its owner: the replay's profile writer and
// the payload read-ahead. The owner fills its own job fields while the worker is idle, posts,
// and later takes the job back. A job the thread has not started by then (it got no CPU: a
// busy machine) is taken back undone, so the owner can do it itself rather than wait for a
// thread that is not running. Posting and taking go through the worker's mutex, so what the
// job wrote is visible to the owner after take(), and what the owner wrote to the job before
// post().
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace encore {

class BackgroundWorker {
 public:
  enum class Taken : std::uint8_t {
    none,         // nothing was posted since the last take
    done,         // the thread ran the job
    not_started,  // the job was taken back undone: the owner does it
  };

  BackgroundWorker() = default;
  BackgroundWorker(const BackgroundWorker&) = delete;
  BackgroundWorker& operator=(const BackgroundWorker&) = delete;
  ~BackgroundWorker() { stop(); }

  // Starts the thread, named `name` (cut to the 15 characters the kernel keeps), with every
  // signal blocked in it (the program's signals are not for it); `job` runs once per post().
  // The job must not throw (the owner keeps its errors). False if no thread could be started:
  // the owner then does the work itself.
  bool start(const std::string& name, std::function<void()> job) noexcept;
  // Stops the thread after the job it is running, if any; a job posted and not started stays
  // posted, for take() to return as not_started. Then joins. Idempotent.
  void stop() noexcept;
  bool started() const noexcept { return thread_.joinable(); }

  // Hands the job over. Only after a take() (or none yet): one job at a time.
  void post();
  // Waits while the job runs; says what became of it. The worker is idle after.
  Taken take();
  // A job posted and not yet taken back, started or not.
  bool busy();

 private:
  enum class State : std::uint8_t { idle, pending, running, done };
  void run();

  std::mutex m_;
  std::condition_variable cv_;
  State state_ = State::idle;
  bool stop_ = false;
  std::function<void()> job_;
  std::thread thread_;
};

}  // namespace encore
