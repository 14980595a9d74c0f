// SimGrid platforms for `encore simulate`: a cluster per topology spec, in SimGrid 3.32's
// platform XML (<cluster topology=... topo_parameters=...>), and the hostfile mapping ranks
// to its hosts.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace encore::exporter {

struct Topology {
  std::string spec;        // as given, e.g. "torus:2x2x2"
  std::string kind;        // SimGrid's name: FLAT, TORUS, FAT_TREE, DRAGONFLY
  std::string parameters;  // SimGrid's topo_parameters ("" for FLAT)
  std::uint64_t hosts = 0;
};

// Parses "flat[:N]", "torus:AxBxC", "fat-tree:L;D,..;U,..;P,.." or "dragonfly:G,g;C,c;R,r;N"
// (the last two take SimGrid's own parameter syntax). `nprocs` sizes a flat cluster without
// N. Throws Error with a one-line message naming the spec.
Topology parse_topology(std::string_view spec, std::uint32_t nprocs);

struct LinkSpec {
  std::string bandwidth = "10GBps";  // SimGrid units: Bps, kBps, MBps, GBps, bps, Gbps...
  std::string latency = "1us";       // s, ms, us, ns
  double host_flops = 1e9;
};

// Throws Error if `value` is not a number followed by one of SimGrid's units for `what`.
void check_unit(std::string_view what, std::string_view value);

std::string platform_xml(const Topology& t, const LinkSpec& links);
// Host name of host index `i` in platform_xml's cluster.
std::string host_name(std::uint64_t i);
// Parses a rank-to-host map: comma-separated host indices, one per rank ("0,2,1,3"). Empty
// text: rank i on host i. Throws Error on a malformed list, a wrong length or an index
// outside the cluster.
std::vector<std::uint64_t> parse_map(std::string_view text, std::uint32_t nprocs,
                                     std::uint64_t hosts);

}  // namespace encore::exporter
