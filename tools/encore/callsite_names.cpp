#include "callsite_names.hpp"

#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <optional>
#include <vector>

#include "common.hpp"
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "encore/error.hpp"
#include "encore/json_file.hpp"

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

struct Site {
  std::uint64_t id;
  std::string module, fallback;
  std::uint64_t address = 0;
};

// One entry of the table, checked key by key: the file comes with the trace. Sets `problem`
// (".key: what") for an entry to skip; nullopt without a problem for a site with no frames.
std::optional<Site> parse_site(const nlohmann::json& site, std::string& problem) {
  const auto skip = [&](std::string what) {
    problem = std::move(what);
    return std::nullopt;
  };
  if (!site.is_object()) return skip(": expected an object");
  const auto id = site.find("id");
  if (id == site.end() || !id->is_number_unsigned())
    return skip(".id: expected a non-negative integer");
  const auto frames = site.find("frames");
  if (frames == site.end() || !frames->is_array()) return skip(".frames: expected an array");
  if (frames->empty()) return std::nullopt;
  const auto& f = frames->front();
  if (!f.is_object()) return skip(".frames[0]: expected an object");
  // Optional keys: absent is a default, another type is damage.
  const auto text = [&](const char* key, std::string& out) {
    const auto it = f.find(key);
    if (it != f.end() && !it->is_string()) {
      problem = fmt::format(".frames[0].{}: expected a string", key);
      return false;
    }
    if (it != f.end()) out = it->get<std::string>();
    return true;
  };
  const auto number = [&](const char* key, std::uint64_t& out) {
    const auto it = f.find(key);
    if (it != f.end() && !it->is_number_unsigned()) {
      problem = fmt::format(".frames[0].{}: expected a non-negative integer", key);
      return false;
    }
    if (it != f.end()) out = it->get<std::uint64_t>();
    return true;
  };
  Site s{id->get<std::uint64_t>(), "", ""};
  std::string function;
  std::uint64_t offset = 0, function_offset = 0;
  if (!text("module", s.module) || !text("function", function) || !number("offset", offset) ||
      !number("function_offset", function_offset))
    return std::nullopt;
  s.fallback =
      f.contains("function")
          ? fmt::format("{}+{:#x}", function, function_offset)
          : fmt::format("{}+{:#x}", std::filesystem::path(s.module).filename().string(), offset);
  s.address = offset;
  return s;
}

// Module paths come from the trace: only a regular file is opened or given to addr2line (a
// FIFO or a device would block either forever).
bool regular_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

}  // namespace

CallsiteNames::CallsiteNames(const std::filesystem::path& trace_dir, std::uint32_t rank) {
  const auto file = trace_dir / fmt::format("rank-{:05}.callsites.json", rank);
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) return;
  // A damaged table only costs the names: one line says so, and the sites show as "#id".
  const auto warn = [&](const std::string& what) {
    print_error("warning: " + what + "; call sites are shown by id where unnamed");
  };
  nlohmann::json doc;
  try {
    doc = read_json_file(file);
  } catch (const Error& e) {
    warn(e.what());
    return;
  }
  const auto list = doc.find("callsites");  // end() for a document that is not an object
  if (list == doc.end() || !list->is_array()) {
    warn(format_in(file.string(), "\"callsites\": expected an array"));
    return;
  }
  std::map<std::string, std::vector<Site>> by_module;
  std::size_t skipped = 0;
  std::string first_problem;
  for (std::size_t i = 0; i < list->size(); ++i) {
    std::string problem;
    const auto s = parse_site((*list)[i], problem);
    if (!problem.empty()) {
      if (skipped++ == 0) first_problem = fmt::format("callsites[{}]{}", i, problem);
      continue;
    }
    if (!s) continue;
    names_[s->id] = s->fallback;
    if (!s->module.empty()) by_module[s->module].push_back(*s);
  }
  if (skipped > 0)
    warn(format_in(file.string(), fmt::format("{} of {} call sites skipped (first: {})", skipped,
                                              list->size(), first_problem)));
  for (auto& [module, sites] : by_module) {
    if (!regular_file(module)) continue;  // its sites keep their fallback names
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
