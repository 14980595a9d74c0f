#include "encore/predict/loggps_params.hpp"

#include <cmath>
#include <fstream>

#include <fmt/format.h>

#include "encore/error.hpp"

namespace encore::predict {

nlohmann::json to_json(const LogGPSParams& p) {
  return {{"L", p.L}, {"o", p.o}, {"g", p.g}, {"G", p.G}, {"S", p.S}, {"source", p.source}};
}

LogGPSParams params_from_json(const nlohmann::json& j, const std::string& source) {
  if (!j.is_object()) throw Error(fmt::format("{}: expected a JSON object", source));
  LogGPSParams p;
  p.source = source;
  const auto real = [&](const char* key, double& out) {
    if (!j.contains(key)) return;
    const auto& v = j.at(key);
    if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0 ||
        v.get<double>() > 1e12)
      throw Error(fmt::format("{}: {}: expected a number of ns between 0 and 1e12", source, key));
    out = v.get<double>();
  };
  real("L", p.L);
  real("o", p.o);
  real("g", p.g);
  real("G", p.G);
  if (j.contains("S")) {
    const auto& v = j.at("S");
    if (!v.is_number_integer() || v.get<std::int64_t>() < 0)
      throw Error(fmt::format("{}: S: expected a non-negative integer (bytes)", source));
    p.S = v.get<std::uint64_t>();
  }
  return p;
}

LogGPSParams load_params(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) throw Error(fmt::format("{}: cannot open parameter file", file.string()));
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw Error(fmt::format("{}: not JSON ({})", file.string(), e.what()));
  }
  return params_from_json(j, file.string());
}

}  // namespace encore::predict
