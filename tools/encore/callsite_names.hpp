// Names for call-site ids: reads a rank's call-site table (rank-NNNNN.callsites.json, written by
// the capture library) and resolves the innermost program frame of each site to
// "function (file:line)" with addr2line when the module has debug information, else to
// "function+offset" or "module+offset".
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>

namespace encore::tool {

class CallsiteNames {
 public:
  // An empty table if the rank has no call-site file.
  CallsiteNames(const std::filesystem::path& trace_dir, std::uint32_t rank);
  bool empty() const noexcept { return names_.empty(); }
  // "main (ring.c:52)", or "#id" for an id the table does not know.
  std::string name(std::uint64_t id) const;

 private:
  std::map<std::uint64_t, std::string> names_;
};

}  // namespace encore::tool
