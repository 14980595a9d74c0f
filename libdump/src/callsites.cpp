#include "callsites.hpp"

#define UNW_LOCAL_ONLY
#include <dlfcn.h>

#include <fstream>

#include <libunwind.h>
#include <nlohmann/json.hpp>

namespace encore::dump {
namespace {

// Our own code's address range: frames inside it are the tool, not the program.
bool in_this_library(std::uintptr_t ip) {
  static const void* self_base = [] {
    Dl_info info{};
    dladdr(reinterpret_cast<const void*>(&in_this_library), &info);
    return info.dli_fbase;
  }();
  Dl_info info{};
  return dladdr(reinterpret_cast<const void*>(ip), &info) && info.dli_fbase == self_base;
}

}  // namespace

std::size_t CallSites::Hash::operator()(const std::vector<std::uintptr_t>& v) const noexcept {
  std::size_t h = 1469598103934665603ull;
  for (auto x : v) h = (h ^ x) * 1099511628211ull;
  return h;
}

std::uint32_t CallSites::current() {
  void* frames[80];
  const int n = unw_backtrace(frames, std::min(depth_ + 16, 80));
  std::vector<std::uintptr_t> stack;
  stack.reserve(static_cast<std::size_t>(depth_));
  for (int i = 0; i < n && static_cast<int>(stack.size()) < depth_; ++i) {
    const auto ip = reinterpret_cast<std::uintptr_t>(frames[i]);
    if (stack.empty() && in_this_library(ip)) continue;
    stack.push_back(ip);
  }
  std::lock_guard lock(mu_);
  auto [it, fresh] = ids_.try_emplace(std::move(stack), static_cast<std::uint32_t>(by_id_.size()));
  if (fresh) by_id_.push_back(&it->first);
  return it->second;
}

void CallSites::write(const std::filesystem::path& file) const {
  std::lock_guard lock(mu_);
  nlohmann::json sites = nlohmann::json::array();
  for (std::size_t id = 0; id < by_id_.size(); ++id) {
    nlohmann::json frames = nlohmann::json::array();
    for (const std::uintptr_t ip : *by_id_[id]) {
      Dl_info info{};
      nlohmann::json f;
      // A return address points after the call: ip - 1 is inside the calling line.
      const auto at = ip - 1;
      if (dladdr(reinterpret_cast<const void*>(at), &info) && info.dli_fname) {
        f["module"] = info.dli_fname;
        f["offset"] = at - reinterpret_cast<std::uintptr_t>(info.dli_fbase);
        if (info.dli_sname) {
          f["function"] = info.dli_sname;
          f["function_offset"] = at - reinterpret_cast<std::uintptr_t>(info.dli_saddr);
        }
      } else {
        f["address"] = at;
      }
      frames.push_back(std::move(f));
    }
    sites.push_back({{"id", id}, {"frames", std::move(frames)}});
  }
  std::ofstream out(file);
  out << nlohmann::json{{"callsites", std::move(sites)}}.dump(1) << "\n";
}

}  // namespace encore::dump
