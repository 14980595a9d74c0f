#include "callsite_names.hpp"

#include <cstdio>
#include <fstream>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace encore::tool {
namespace {

// Offsets in the table are from the module's load address. addr2line wants those for
// position-independent modules, but link-time addresses for a fixed-address executable: add
// the address of its first loadable segment then.
std::uint64_t link_base(const std::string& module) {
  std::ifstream f(module, std::ios::binary);
  unsigned char ehdr[64] = {};
  if (!f.read(reinterpret_cast<char*>(ehdr), sizeof ehdr) || ehdr[0] != 0x7f || ehdr[4] != 2)
    return 0;  // not a 64-bit ELF file
  const auto u16 = [&](int at) { return static_cast<unsigned>(ehdr[at] | (ehdr[at + 1] << 8)); };
  if (u16(16) != 2) return 0;  // ET_EXEC only
  std::uint64_t phoff = 0;
  for (int i = 7; i >= 0; --i) phoff = (phoff << 8) | ehdr[32 + i];
  const unsigned phentsize = u16(54), phnum = u16(56);
  for (unsigned i = 0; i < phnum && i < 256; ++i) {
    unsigned char ph[56] = {};
    f.seekg(static_cast<std::streamoff>(phoff + std::uint64_t{i} * phentsize));
    if (!f.read(reinterpret_cast<char*>(ph), sizeof ph)) break;
    if (ph[0] == 1) {  // PT_LOAD
      std::uint64_t vaddr = 0;
      for (int b = 7; b >= 0; --b) vaddr = (vaddr << 8) | ph[16 + b];
      return vaddr;
    }
  }
  return 0;
}

// "function\nfile:line\n" per address, from one addr2line run per module.
std::vector<std::pair<std::string, std::string>> addr2line(const std::string& module,
                                                           const std::vector<std::uint64_t>& at) {
  std::vector<std::pair<std::string, std::string>> out;
  std::string cmd = "addr2line -f -C -e '" + module + "'";
  for (const auto a : at) cmd += fmt::format(" {:#x}", a);
  cmd += " 2>/dev/null";
  if (module.find('\'') != std::string::npos) return out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return out;
  char line[4096];
  std::vector<std::string> lines;
  while (std::fgets(line, sizeof line, p)) {
    std::string s(line);
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
    lines.push_back(s);
  }
  pclose(p);
  for (std::size_t i = 0; i + 1 < lines.size(); i += 2) out.emplace_back(lines[i], lines[i + 1]);
  return out;
}

}  // namespace

CallsiteNames::CallsiteNames(const std::filesystem::path& trace_dir, std::uint32_t rank) {
  const auto file = trace_dir / fmt::format("rank-{:05}.callsites.json", rank);
  std::ifstream in(file);
  if (!in) return;
  nlohmann::json doc;
  try {
    in >> doc;
  } catch (const std::exception&) {
    return;  // a damaged table only costs the names
  }
  struct Site {
    std::uint64_t id;
    std::string module, fallback;
    std::uint64_t address = 0;
  };
  std::map<std::string, std::vector<Site>> by_module;
  for (const auto& site : doc.value("callsites", nlohmann::json::array())) {
    const auto& frames = site.value("frames", nlohmann::json::array());
    if (frames.empty() || !site.contains("id")) continue;
    const auto& f = frames.front();
    Site s{site["id"].get<std::uint64_t>(), f.value("module", ""), ""};
    const auto offset = f.value("offset", std::uint64_t{0});
    s.fallback =
        f.contains("function")
            ? fmt::format("{}+{:#x}", f["function"].get<std::string>(),
                          f.value("function_offset", std::uint64_t{0}))
            : fmt::format("{}+{:#x}", std::filesystem::path(s.module).filename().string(), offset);
    s.address = offset;
    names_[s.id] = s.fallback;
    if (!s.module.empty()) by_module[s.module].push_back(s);
  }
  for (auto& [module, sites] : by_module) {
    const std::uint64_t base = link_base(module);
    std::vector<std::uint64_t> at;
    for (const auto& s : sites) at.push_back(s.address + base);
    const auto resolved = addr2line(module, at);
    for (std::size_t i = 0; i < resolved.size() && i < sites.size(); ++i) {
      const auto& [function, location] = resolved[i];
      if (function == "??" && location.rfind("??", 0) == 0) continue;
      const std::string where =
          location.rfind("??", 0) == 0
              ? ""
              : " (" + std::filesystem::path(location).filename().string() + ")";
      names_[sites[i].id] = (function == "??" ? sites[i].fallback : function) + where;
    }
  }
}

std::string CallsiteNames::name(std::uint64_t id) const {
  const auto it = names_.find(id);
  return it == names_.end() ? fmt::format("#{}", id) : it->second;
}

}  // namespace encore::tool
