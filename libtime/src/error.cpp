#include "encore/error.hpp"

#include <system_error>

namespace encore {

std::string format_at(std::string_view path, std::string_view what, std::uint64_t offset) {
  std::string s = format_in(path, what);
  s += " at offset ";
  s += std::to_string(offset);
  return s;
}

std::string format_in(std::string_view path, std::string_view what) {
  std::string s;
  s.reserve(path.size() + what.size() + 2);
  s += path;
  s += ": ";
  s += what;
  return s;
}

Error Error::at(std::string_view path, std::string_view what, std::uint64_t offset) {
  return Error(format_at(path, what, offset));
}

std::string errno_text(int err) {
  // std::generic_category avoids the static buffer of strerror().
  return std::generic_category().message(err);
}

}  // namespace encore
