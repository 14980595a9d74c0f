// Running a program under one of Encore's libraries: finding the library (installed next to
// this executable, or in the build tree), preloading it, and running the command with its exit
// code passed through. Shared by `encore record` and `encore replay`.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace encore::tool {

// The library `file_name`: from the environment variable `env_var` if set, else
// <exe>/../<libdir>/file_name, else `build_path` (may be null). Throws ExitError(usage).
std::filesystem::path find_library(const char* file_name, const char* env_var,
                                   const char* build_path);
void set_env(const char* name, const std::string& value);
// Puts `library` first in LD_PRELOAD, keeping what was there.
void prepend_preload(const std::filesystem::path& library);
// The command as execvp's argv (pointing into `command`, null-terminated).
std::vector<char*> exec_argv(const std::vector<std::string>& command);
// Runs the command and returns its exit code (128 + signal if a signal killed it, 127/126 if
// it cannot be found/executed). Terminal signals reach it directly; SIGTERM and SIGHUP sent to
// encore are passed on.
int run_command(const std::vector<std::string>& command);

}  // namespace encore::tool
