#include "encore/json_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string>

#include "encore/error.hpp"

namespace encore {
namespace {

// Offset of the first bracket that opens level kMaxJsonDepth + 1, outside strings; npos if
// none. Cheaper than a parser callback, and it knows where it is.
std::size_t too_deep_at(std::string_view text) {
  std::size_t depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;  // the escaped character cannot end the string
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth) return i;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return std::string_view::npos;
}

}  // namespace

nlohmann::json parse_json(std::string_view text, std::string_view name) {
  if (const std::size_t at = too_deep_at(text); at != std::string_view::npos)
    throw Error::at(name, "nesting deeper than " + std::to_string(kMaxJsonDepth), at);
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // e.byte is 1-based and points just past the problem.
    throw Error::at(name, "invalid JSON", e.byte > 0 ? e.byte - 1 : 0);
  }
}

nlohmann::json read_json_file(const std::filesystem::path& path) {
  const std::string name = path.string();
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer.
  const int fd = ::open(name.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw Error(format_in(name, "cannot open: " + errno_text(errno)));
  std::string text;
  std::string problem;
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    problem = "cannot stat: " + errno_text(errno);
  } else if (!S_ISREG(st.st_mode)) {
    problem = "not a regular file";
  } else if (static_cast<std::uint64_t>(st.st_size) > kMaxJsonFileBytes) {
    problem = "larger than " + std::to_string(kMaxJsonFileBytes >> 20) + " MiB (" +
              std::to_string(st.st_size) + " bytes)";
  } else {
    // Read to the end, a byte beyond the limit at most: the file may grow after fstat().
    text.resize(static_cast<std::size_t>(st.st_size) + 1);
    std::size_t got = 0;
    while (got < text.size()) {
      const ssize_t n = ::read(fd, text.data() + got, text.size() - got);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        problem = "read failed: " + errno_text(errno);
        break;
      }
      if (n == 0) break;
      got += static_cast<std::size_t>(n);
      if (got == text.size() && text.size() <= kMaxJsonFileBytes)
        text.resize(std::min<std::size_t>(text.size() * 2, kMaxJsonFileBytes + 1));
    }
    if (problem.empty() && got > kMaxJsonFileBytes)
      problem = "larger than " + std::to_string(kMaxJsonFileBytes >> 20) + " MiB";
    text.resize(got);
  }
  ::close(fd);
  if (!problem.empty()) throw Error(format_in(name, problem));
  return parse_json(text, name);
}

}  // namespace encore
