#include "output_file.hpp"

#include <cerrno>

#include "encore/error.hpp"

namespace encore::exporter {

OutputFile::OutputFile(const std::filesystem::path& path) : path_(path) {
  file_ = std::fopen(path.c_str(), "wb");
  if (!file_) fail("cannot create", errno);
  std::setvbuf(file_, nullptr, _IONBF, 0);  // buffer_ is the buffer
}

OutputFile::~OutputFile() {
  if (file_) std::fclose(file_);
}

void OutputFile::fail(std::string_view what, int err) {
  if (file_) std::fclose(file_);
  file_ = nullptr;
  throw Error(format_in(path_.string(), std::string(what) + ": " + errno_text(err)));
}

void OutputFile::write(std::string_view text) {
  buffer_.append(text.data(), text.data() + text.size());
  if (buffer_.size() >= kFlushBytes) flush_buffer();
}

void OutputFile::flush_buffer() {
  if (buffer_.size() != 0 &&
      std::fwrite(buffer_.data(), 1, buffer_.size(), file_) != buffer_.size())
    fail("cannot write", errno);
  buffer_.clear();
}

void OutputFile::close() {
  if (!file_) return;
  flush_buffer();
  std::FILE* f = file_;
  file_ = nullptr;
  const bool bad = std::ferror(f) != 0;
  const int err = errno;
  if (std::fclose(f) != 0 || bad) {
    file_ = nullptr;
    throw Error(format_in(path_.string(), "cannot write: " + errno_text(bad ? err : errno)));
  }
}

void make_output_dir(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (!std::filesystem::is_directory(dir))
    throw Error(format_in(dir.string(), ec ? "cannot create output directory: " + ec.message()
                                           : "exists and is not a directory"));
}

}  // namespace encore::exporter
