#include "launch.hpp"

#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>

#include "common.hpp"

#include "encore/error.hpp"

#ifndef ENCORE_INSTALL_LIBDIR
#define ENCORE_INSTALL_LIBDIR "lib"
#endif

namespace encore::tool {

namespace fs = std::filesystem;

namespace {

bool is_file(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

volatile sig_atomic_t g_child = 0;

void forward_signal(int sig) {
  if (g_child > 0) ::kill(static_cast<pid_t>(g_child), sig);
}

}  // namespace

fs::path find_library(const char* file_name, const char* env_var, const char* build_path) {
  if (const char* env = std::getenv(env_var); env && *env) {
    fs::path p = fs::absolute(env);
    if (!is_file(p))
      throw ExitError(kExitUsage, format_in(p.string(), std::string(env_var) + ": no such file"));
    return p;
  }
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path installed = exe.parent_path().parent_path() / ENCORE_INSTALL_LIBDIR / file_name;
    if (is_file(installed)) return installed.lexically_normal();
  }
  if (build_path && is_file(build_path)) return fs::path(build_path);
  throw ExitError(kExitUsage,
                  std::string("cannot find ") + file_name + " (set " + env_var + " to its path)");
}

void set_env(const char* name, const std::string& value) { ::setenv(name, value.c_str(), 1); }

void prepend_preload(const fs::path& library) {
  std::string preload = library.string();
  if (const char* old = std::getenv("LD_PRELOAD"); old && *old) preload += std::string(":") + old;
  set_env("LD_PRELOAD", preload);
}

std::vector<char*> exec_argv(const std::vector<std::string>& command) {
  std::vector<char*> argv;
  argv.reserve(command.size() + 1);
  for (const auto& a : command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  return argv;
}

// Runs the command; returns its exit code (128 + signal if it was killed).
int run_command(const std::vector<std::string>& command) {
  std::vector<char*> argv = exec_argv(command);

  // Terminal signals reach the whole foreground group (the command too): the parent only
  // waits. Signals sent to encore alone are passed on.
  struct sigaction ignore {
  }, forward{}, old_int{}, old_quit{}, old_term{}, old_hup{};
  ignore.sa_handler = SIG_IGN;
  forward.sa_handler = forward_signal;
  sigemptyset(&ignore.sa_mask);
  sigemptyset(&forward.sa_mask);
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) throw ExitError(kExitUsage, "cannot start the command: fork: " + errno_text(errno));
  if (pid == 0) {
    ::execvp(argv[0], argv.data());
    const int err = errno;
    const std::string msg = format_in(command[0], errno_text(err));
    std::fprintf(stderr, "encore: %s\n", msg.c_str());
    std::fflush(stderr);
    ::_exit(err == ENOENT ? 127 : 126);
  }
  g_child = pid;
  ::sigaction(SIGINT, &ignore, &old_int);
  ::sigaction(SIGQUIT, &ignore, &old_quit);
  ::sigaction(SIGTERM, &forward, &old_term);
  ::sigaction(SIGHUP, &forward, &old_hup);
  int status = 0;
  pid_t r;
  do {
    r = ::waitpid(pid, &status, 0);
  } while (r < 0 && errno == EINTR);
  const int wait_err = errno;
  g_child = 0;
  ::sigaction(SIGINT, &old_int, nullptr);
  ::sigaction(SIGQUIT, &old_quit, nullptr);
  ::sigaction(SIGTERM, &old_term, nullptr);
  ::sigaction(SIGHUP, &old_hup, nullptr);
  if (r < 0) throw ExitError(kExitUsage, "waiting for the command: " + errno_text(wait_err));
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return kExitUsage;
}

}  // namespace encore::tool
