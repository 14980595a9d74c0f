#include "encore/background_worker.hpp"

#include <pthread.h>
#include <signal.h>

#include <system_error>
#include <utility>

namespace encore {

bool BackgroundWorker::start(const std::string& name, std::function<void()> job) noexcept {
  if (started()) return true;
  job_ = std::move(job);
  {
    const std::lock_guard lock(m_);
    stop_ = false;
  }
  // Blocked here while the thread is created, so that it starts with every signal blocked.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  try {
    thread_ = std::thread([this] { run(); });
    // Linux keeps 15 characters and a longer name is refused whole.
    pthread_setname_np(thread_.native_handle(), name.substr(0, 15).c_str());
  } catch (const std::system_error&) {
    // no thread: the owner does the jobs
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return started();
}

void BackgroundWorker::stop() noexcept {
  if (!started()) return;
  {
    const std::lock_guard lock(m_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void BackgroundWorker::post() {
  {
    const std::lock_guard lock(m_);
    state_ = State::pending;
  }
  cv_.notify_all();
}

BackgroundWorker::Taken BackgroundWorker::take() {
  std::unique_lock lock(m_);
  cv_.wait(lock, [this] { return state_ != State::running; });
  const State was = std::exchange(state_, State::idle);
  return was == State::pending ? Taken::not_started
         : was == State::done  ? Taken::done
                               : Taken::none;
}

bool BackgroundWorker::busy() {
  const std::lock_guard lock(m_);
  return state_ == State::pending || state_ == State::running;
}

void BackgroundWorker::run() {
  std::unique_lock lock(m_);
  for (;;) {
    cv_.wait(lock, [this] { return stop_ || state_ == State::pending; });
    if (stop_) return;
    state_ = State::running;
    lock.unlock();
    try {
      job_();
    } catch (...) {
      // jobs report their own errors; nothing may escape a thread
    }
    lock.lock();
    state_ = State::done;
    cv_.notify_all();
  }
}

}  // namespace encore
