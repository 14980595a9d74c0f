// A buffered output file whose every failure (open, write, close: disk full...) throws one
// line naming the file, so exporters never leave a silently short file.
#pragma once

#include <cstdio>
#include <filesystem>
#include <iterator>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace encore::exporter {

class OutputFile {
 public:
  explicit OutputFile(const std::filesystem::path& path);  // creates or truncates
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  void write(std::string_view text);
  // Formats straight into the file's buffer (no string per record).
  template <typename... T>
  void print(fmt::format_string<T...> format, T&&... args) {
    fmt::format_to(std::back_inserter(buffer_), format, std::forward<T>(args)...);
    if (buffer_.size() >= kFlushBytes) flush_buffer();
  }
  void close();
  const std::filesystem::path& path() const noexcept { return path_; }

 private:
  static constexpr std::size_t kFlushBytes = 1 << 20;
  void flush_buffer();
  [[noreturn]] void fail(std::string_view what, int err);
  std::filesystem::path path_;
  std::FILE* file_ = nullptr;
  fmt::memory_buffer buffer_;
};

// Creates `dir` (and parents) or accepts an existing directory; throws Error otherwise.
void make_output_dir(const std::filesystem::path& dir);

}  // namespace encore::exporter
