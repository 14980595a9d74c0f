// A buffered output file whose every failure (open, write, close: disk full...) throws one
// line naming the file, so exporters never leave a silently short file.
#pragma once

#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>

namespace encore::exporter {

class OutputFile {
 public:
  explicit OutputFile(const std::filesystem::path& path);  // creates or truncates
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  void write(std::string_view text);
  void close();
  const std::filesystem::path& path() const noexcept { return path_; }

 private:
  [[noreturn]] void fail(std::string_view what, int err);
  std::filesystem::path path_;
  std::FILE* file_ = nullptr;
};

// Creates `dir` (and parents) or accepts an existing directory; throws Error otherwise.
void make_output_dir(const std::filesystem::path& dir);

}  // namespace encore::exporter
