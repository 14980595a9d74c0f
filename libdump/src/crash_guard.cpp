#include "crash_guard.hpp"

#include <signal.h>

#include <cstdlib>

#include "recorder.hpp"

namespace encore::dump {
namespace {

constexpr int kSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTERM, SIGINT};
struct sigaction previous[sizeof kSignals / sizeof kSignals[0]];

void on_fatal_signal(int sig) {
  if (Recorder* rec = Recorder::get(); rec && rec->writer) rec->writer->emergency_flush();
  // Hand the signal to whoever had it before (MPICH, UCX or the default action).
  for (std::size_t i = 0; i < sizeof kSignals / sizeof kSignals[0]; ++i) {
    if (kSignals[i] == sig) sigaction(sig, &previous[i], nullptr);
  }
  raise(sig);
}

void on_exit() {
  if (Recorder* rec = Recorder::get()) rec->finish(EndStatus::exited);
}

}  // namespace

void install_crash_guard() {
  struct sigaction sa {};
  sa.sa_handler = on_fatal_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND;
  for (std::size_t i = 0; i < sizeof kSignals / sizeof kSignals[0]; ++i) {
    sigaction(kSignals[i], &sa, &previous[i]);
  }
  std::atexit(on_exit);
}

}  // namespace encore::dump
