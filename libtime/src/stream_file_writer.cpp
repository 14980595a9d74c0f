#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <utility>

#include "encore/error.hpp"
#include "encore/stream_file.hpp"

namespace encore {

int write_fully(int fd, std::span<const std::byte> bytes) noexcept {
  const std::byte* p = bytes.data();
  std::size_t left = bytes.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    // write(2) returning 0 for a non-empty request makes no progress; treat
    // it as a full device rather than spinning.
    if (n == 0) return ENOSPC;
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  return 0;
}

StreamFileWriter::StreamFileWriter(const std::filesystem::path& path, const FileHeader& header)
    : path_(path.string()) {
  do {
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  } while (fd_ < 0 && errno == EINTR);
  if (fd_ < 0) throw Error(format_in(path_, "cannot create: " + errno_text(errno)));
  std::byte bytes[kFileHeaderSize];
  encode_file_header(header, bytes);
  append(bytes);
}

StreamFileWriter::~StreamFileWriter() {
  if (fd_ >= 0) ::close(fd_);
}

StreamFileWriter::StreamFileWriter(StreamFileWriter&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      size_(other.size_),
      path_(std::move(other.path_)),
      failure_(std::move(other.failure_)) {}

StreamFileWriter& StreamFileWriter::operator=(StreamFileWriter&& other) noexcept {
  std::swap(fd_, other.fd_);
  std::swap(size_, other.size_);
  std::swap(path_, other.path_);
  std::swap(failure_, other.failure_);
  return *this;
}

void StreamFileWriter::fail(std::string_view what, int err) {
  failure_ = format_at(path_, std::string(what) + ": " + errno_text(err), size_);
  throw Error(failure_);
}

void StreamFileWriter::append(std::span<const std::byte> bytes) {
  if (!failure_.empty()) throw Error(failure_ + " (earlier failure; stream not written further)");
  if (fd_ < 0) throw Error(format_in(path_, "append to a closed stream file"));
  if (const int err = write_fully(fd_, bytes); err != 0) fail("write failed", err);
  size_ += bytes.size();
}

void StreamFileWriter::append(std::span<const std::byte> first, std::span<const std::byte> second) {
  if (!failure_.empty()) throw Error(failure_ + " (earlier failure; stream not written further)");
  if (fd_ < 0) throw Error(format_in(path_, "append to a closed stream file"));
  iovec v[2] = {{const_cast<std::byte*>(first.data()), first.size()},
                {const_cast<std::byte*>(second.data()), second.size()}};
  ssize_t n;
  do {
    n = ::writev(fd_, v, 2);
  } while (n < 0 && errno == EINTR);
  if (n < 0) fail("write failed", errno);
  // A short writev: the rest goes out piece by piece, as append() would.
  auto done = static_cast<std::size_t>(n);
  const std::size_t from_first = std::min(done, first.size());
  int err = write_fully(fd_, first.subspan(from_first));
  if (err == 0) err = write_fully(fd_, second.subspan(done - from_first));
  if (err != 0) {
    size_ += done;
    fail("write failed", err);
  }
  size_ += first.size() + second.size();
}

void StreamFileWriter::sync() {
  if (fd_ < 0) throw Error(format_in(path_, "sync of a closed stream file"));
  if (::fdatasync(fd_) != 0) fail("fdatasync failed", errno);
}

void StreamFileWriter::close() {
  if (fd_ < 0) return;
  const int fd = std::exchange(fd_, -1);
  // Do not retry close on EINTR: on Linux the descriptor is already gone.
  if (::close(fd) != 0 && errno != EINTR) fail("close failed", errno);
  if (!failure_.empty()) throw Error(failure_);
}

}  // namespace encore
