// The one exception type of the trace-format layer.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace encore {

// Messages are a single line naming what went wrong and where (file, offset,
// chunk index), so a user can act on them without a debugger.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;

  // "<path>: <what> at offset <n>"
  static Error at(std::string_view path, std::string_view what, std::uint64_t offset);
};

// "<path>: <what> at offset <n>"
std::string format_at(std::string_view path, std::string_view what, std::uint64_t offset);

// "<path>: <what>"
std::string format_in(std::string_view path, std::string_view what);

// Thread-safe text for an errno value (e.g. "No space left on device").
std::string errno_text(int err);

}  // namespace encore
