// The one exception the datatype engine throws: an invalid or freed handle, or arguments MPI
// would reject. The message is a single line; the replay turns it into its own error report.
#pragma once

#include <stdexcept>
#include <string>

namespace encore::replay {

class DatatypeError : public std::runtime_error {
 public:
  explicit DatatypeError(const std::string& what) : std::runtime_error(what) {}
};

}  // namespace encore::replay
