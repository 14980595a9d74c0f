#include "simgrid_platform.hpp"

#include <charconv>
#include <regex>

#include <fmt/format.h>

#include "encore/error.hpp"

namespace encore::exporter {
namespace {

// Splits on `sep`; each piece must be a positive integer. Returns the product.
std::uint64_t product_of(std::string_view list, char sep, std::string_view spec) {
  std::uint64_t product = 1;
  std::size_t pos = 0;
  while (true) {
    const std::size_t end = std::min(list.find(sep, pos), list.size());
    const std::string_view piece = list.substr(pos, end - pos);
    std::uint64_t v = 0;
    const auto [p, ec] = std::from_chars(piece.data(), piece.data() + piece.size(), v);
    if (ec != std::errc() || p != piece.data() + piece.size() || v == 0 || v > 1u << 20)
      throw Error(fmt::format("--topology {}: '{}' is not a positive integer", spec, piece));
    product *= v;
    if (product > 1u << 20) throw Error(fmt::format("--topology {}: too many hosts", spec));
    if (end == list.size()) return product;
    pos = end + 1;
  }
}

// The i-th ';'-separated group of SimGrid's parameters.
std::vector<std::string_view> groups(std::string_view params) {
  std::vector<std::string_view> out;
  std::size_t pos = 0;
  while (true) {
    const std::size_t end = std::min(params.find(';', pos), params.size());
    out.push_back(params.substr(pos, end - pos));
    if (end == params.size()) return out;
    pos = end + 1;
  }
}

}  // namespace

Topology parse_topology(std::string_view spec, std::uint32_t nprocs) {
  const std::size_t colon = spec.find(':');
  const std::string_view kind = spec.substr(0, colon);
  const std::string_view params = colon == std::string_view::npos ? "" : spec.substr(colon + 1);
  Topology t;
  t.spec = std::string(spec);
  if (kind == "flat") {
    t.kind = "FLAT";
    t.hosts = params.empty() ? nprocs : product_of(params, 'x', spec);
  } else if (kind == "torus") {
    t.kind = "TORUS";
    t.hosts = product_of(params, 'x', spec);
    t.parameters = std::string(params);
    for (auto& c : t.parameters)
      if (c == 'x') c = ',';
  } else if (kind == "fat-tree") {
    t.kind = "FAT_TREE";
    const auto g = groups(params);
    if (g.size() != 4)
      throw Error(
          fmt::format("--topology {}: fat-tree takes LEVELS;DOWN,..;UP,..;PARALLEL,..", spec));
    const std::uint64_t levels = product_of(g[0], ',', spec);
    for (std::size_t i = 1; i < 4; ++i)
      if (static_cast<std::uint64_t>(std::count(g[i].begin(), g[i].end(), ',')) + 1 != levels)
        throw Error(
            fmt::format("--topology {}: every list needs {} values (one per level)", spec, levels));
    t.hosts = product_of(g[1], ',', spec);
    product_of(g[2], ',', spec);
    product_of(g[3], ',', spec);
    t.parameters = std::string(params);
  } else if (kind == "dragonfly") {
    t.kind = "DRAGONFLY";
    const auto g = groups(params);
    if (g.size() != 4 || std::count(g[0].begin(), g[0].end(), ',') != 1 ||
        std::count(g[1].begin(), g[1].end(), ',') != 1 ||
        std::count(g[2].begin(), g[2].end(), ',') != 1)
      throw Error(fmt::format(
          "--topology {}: dragonfly takes GROUPS,LINKS;CHASSIS,LINKS;ROUTERS,LINKS;NODES", spec));
    t.hosts = 1;
    for (std::size_t i = 0; i < 3; ++i) {
      t.hosts *= product_of(g[i].substr(0, g[i].find(',')), ',', spec);
      product_of(g[i].substr(g[i].find(',') + 1), ',', spec);
    }
    t.hosts *= product_of(g[3], ',', spec);
    t.parameters = std::string(params);
  } else {
    throw Error(fmt::format(
        "--topology {}: unknown topology '{}' (flat, torus, fat-tree or dragonfly)", spec, kind));
  }
  if (t.hosts < nprocs)
    throw Error(fmt::format("--topology {}: {} hosts for {} ranks", spec, t.hosts, nprocs));
  return t;
}

void check_unit(std::string_view what, std::string_view value) {
  static const std::regex bw(R"(^[0-9]*\.?[0-9]+([eE][-+]?[0-9]+)?([kMGT]i?)?([Bb]ps)$)");
  static const std::regex lat(R"(^[0-9]*\.?[0-9]+([eE][-+]?[0-9]+)?(s|ms|us|ns|ps)$)");
  const std::string v(value);
  if (!std::regex_match(v, what == "--latency" ? lat : bw))
    throw Error(fmt::format("{} {}: expected a number with a SimGrid unit ({})", what, value,
                            what == "--latency" ? "s, ms, us, ns" : "Bps, MBps, GBps, Gbps..."));
}

std::string host_name(std::uint64_t i) { return fmt::format("node-{}", i); }

std::string platform_xml(const Topology& t, const LinkSpec& links) {
  std::string topo = t.kind == "FLAT" ? ""
                                      : fmt::format(R"( topology="{}" topo_parameters="{}")",
                                                    t.kind, t.parameters);
  return fmt::format(
      "<?xml version='1.0'?>\n"
      "<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
      "<platform version=\"4.1\">\n"
      "  <!-- encore simulate: {} -->\n"
      "  <cluster id=\"cluster\" prefix=\"node-\" radical=\"0-{}\" suffix=\"\" speed=\"{}f\" "
      "bw=\"{}\" lat=\"{}\"{}/>\n"
      "</platform>\n",
      t.spec, t.hosts - 1, links.host_flops, links.bandwidth, links.latency, topo);
}

std::vector<std::uint64_t> parse_map(std::string_view text, std::uint32_t nprocs,
                                     std::uint64_t hosts) {
  std::vector<std::uint64_t> map;
  if (text.empty()) {
    for (std::uint32_t r = 0; r < nprocs; ++r) map.push_back(r);
    return map;
  }
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t end = std::min(text.find(',', pos), text.size());
    const std::string_view piece = text.substr(pos, end - pos);
    std::uint64_t v = 0;
    const auto [p, ec] = std::from_chars(piece.data(), piece.data() + piece.size(), v);
    if (ec != std::errc() || p != piece.data() + piece.size())
      throw Error(fmt::format("--map: '{}' is not a host index", piece));
    if (v >= hosts)
      throw Error(fmt::format("--map: host {} is outside the cluster (hosts 0-{})", v, hosts - 1));
    map.push_back(v);
    pos = end + 1;
  }
  if (map.size() != nprocs)
    throw Error(fmt::format("--map: {} host indices for {} ranks", map.size(), nprocs));
  return map;
}

}  // namespace encore::exporter
