#include "encore/predict/loggps_params.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <string_view>

#include <fmt/format.h>

#include "encore/error.hpp"
#include "encore/json_file.hpp"

namespace encore::predict {

nlohmann::json to_json(const LogGPSParams& p) {
  nlohmann::json j = {{"L", p.L}, {"o", p.o},         {"g", p.g},          {"G", p.G},
                      {"S", p.S}, {"gamma", p.gamma}, {"source", p.source}};
  if (p.gamma_nonblocking) j["gamma_nonblocking"] = *p.gamma_nonblocking;
  if (!p.gamma_by_kind.empty()) {
    auto& kinds = j["gamma_by_kind"] = nlohmann::json::object();
    for (const auto& [kind, g] : p.gamma_by_kind) kinds[kind] = g;
  }
  if (!p.G_classes.empty()) {
    auto& classes = j["G_classes"] = nlohmann::json::array();
    for (const SizeClassG& c : p.G_classes) classes.push_back({{"from", c.from}, {"G", c.G}});
  }
  return j;
}

LogGPSParams params_from_json(const nlohmann::json& j, const std::string& source) {
  if (!j.is_object()) throw Error(fmt::format("{}: expected a JSON object", source));
  // A misspelt key would leave its default in place without a word.
  for (const auto& [key, value] : j.items()) {
    static constexpr std::string_view kKnown[] = {
        "L",         "o",     "g", "G", "S", "gamma", "gamma_nonblocking", "gamma_by_kind",
        "G_classes", "source"};
    if (std::find(std::begin(kKnown), std::end(kKnown), key) == std::end(kKnown))
      throw Error(
          fmt::format("{}: {}: not a parameter (L, o, g, G, S, gamma, "
                      "gamma_nonblocking, gamma_by_kind, G_classes)",
                      source, key));
  }
  LogGPSParams p;
  p.source = source;
  const auto number = [&](const nlohmann::json& v, std::string_view key) {
    if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0 ||
        v.get<double>() > 1e12)
      throw Error(fmt::format("{}: {}: expected a number of ns between 0 and 1e12", source, key));
    return v.get<double>();
  };
  const auto real = [&](const char* key, double& out) {
    if (j.contains(key)) out = number(j.at(key), key);
  };
  real("L", p.L);
  real("o", p.o);
  real("g", p.g);
  real("G", p.G);
  real("gamma", p.gamma);
  if (j.contains("gamma_nonblocking")) real("gamma_nonblocking", p.gamma_nonblocking.emplace());
  if (j.contains("gamma_by_kind")) {
    const auto& v = j.at("gamma_by_kind");
    if (!v.is_object())
      throw Error(
          fmt::format("{}: gamma_by_kind: expected an object of ns per byte by kind "
                      "(reduce, allreduce, reduce_scatter, scan)",
                      source));
    for (const auto& [kind, g] : v.items()) {
      if (kind != "reduce" && kind != "allreduce" && kind != "reduce_scatter" && kind != "scan")
        throw Error(
            fmt::format("{}: gamma_by_kind: {}: not a reduction (reduce, allreduce, "
                        "reduce_scatter, scan)",
                        source, kind));
      p.gamma_by_kind[kind] = number(g, "gamma_by_kind." + kind);
    }
  }
  if (j.contains("S")) {
    const auto& v = j.at("S");
    if (!v.is_number_integer() || v.get<std::int64_t>() < 0)
      throw Error(fmt::format("{}: S: expected a non-negative integer (bytes)", source));
    p.S = v.get<std::uint64_t>();
  }
  if (j.contains("G_classes")) {
    const auto& v = j.at("G_classes");
    const auto bad = [&](std::size_t i) {
      return Error(
          fmt::format("{}: G_classes[{}]: expected {{\"from\": bytes, \"G\": ns per "
                      "byte}} with \"from\" ascending",
                      source, i));
    };
    if (!v.is_array() || v.size() > 64)
      throw Error(fmt::format("{}: G_classes: expected an array of at most 64 classes", source));
    for (std::size_t i = 0; i < v.size(); ++i) {
      const auto& c = v[i];
      if (!c.is_object() || !c.contains("from") || !c.contains("G") ||
          !c["from"].is_number_integer() || c["from"].get<std::int64_t>() < 0 ||
          !c["G"].is_number())
        throw bad(i);
      const double g = c["G"].get<double>();
      const std::uint64_t from = c["from"].get<std::uint64_t>();
      if (!std::isfinite(g) || g < 0 || g > 1e12 ||
          (!p.G_classes.empty() && from <= p.G_classes.back().from))
        throw bad(i);
      p.G_classes.push_back({from, g});
    }
  }
  return p;
}

LogGPSParams load_params(const std::filesystem::path& file) {
  return params_from_json(read_json_file(file), file.string());
}

}  // namespace encore::predict
