#include "dumpi_format.hpp"

#include <cerrno>

#include "encore/error.hpp"

namespace encore::exporter::dumpi {

BigEndianFile::BigEndianFile(std::filesystem::path path) : path_(std::move(path)) {
  file_ = std::fopen(path_.c_str(), "wb");
  if (!file_) throw Error(format_in(path_.string(), "cannot create: " + errno_text(errno)));
  buf_.reserve((1u << 20) + 64);
}

BigEndianFile::~BigEndianFile() {
  if (file_) std::fclose(file_);
}

void BigEndianFile::string(std::string_view s) {
  if (s.size() > 0xffff) s = s.substr(0, 0xffff);
  u16(static_cast<std::uint16_t>(s.size()));
  buf_.insert(buf_.end(), s.begin(), s.end());
  maybe_flush();
}

void BigEndianFile::flush() {
  if (buf_.empty()) return;
  if (std::fwrite(buf_.data(), 1, buf_.size(), file_) != buf_.size())
    throw Error(format_in(path_.string(), "write failed: " + errno_text(errno)));
  flushed_ += buf_.size();
  buf_.clear();
}

void BigEndianFile::close() {
  flush();
  const int rc = std::fclose(file_);
  file_ = nullptr;
  if (rc != 0) throw Error(format_in(path_.string(), "write failed: " + errno_text(errno)));
}

}  // namespace encore::exporter::dumpi
