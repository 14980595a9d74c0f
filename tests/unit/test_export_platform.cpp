// encore simulate's platform pieces: topology specs, rank-to-host maps, SimGrid units.
#include "simgrid_platform.hpp"
#include <gtest/gtest.h>

#include "encore/error.hpp"

namespace encore::exporter {
namespace {

TEST(ExportPlatform, TopologySpecs) {
  const Topology torus = parse_topology("torus:2x3x4", 2);
  EXPECT_EQ(torus.kind, "TORUS");
  EXPECT_EQ(torus.parameters, "2,3,4");
  EXPECT_EQ(torus.hosts, 24u);
  const Topology tree = parse_topology("fat-tree:2;4,4;1,2;1,2", 2);
  EXPECT_EQ(tree.kind, "FAT_TREE");
  EXPECT_EQ(tree.parameters, "2;4,4;1,2;1,2");
  EXPECT_EQ(tree.hosts, 16u);
  const Topology fly = parse_topology("dragonfly:3,4;4,3;5,1;2", 2);
  EXPECT_EQ(fly.kind, "DRAGONFLY");
  EXPECT_EQ(fly.hosts, 120u);
  EXPECT_EQ(parse_topology("flat", 6).hosts, 6u);
  EXPECT_EQ(parse_topology("flat:8", 6).hosts, 8u);
}

TEST(ExportPlatform, BadTopologiesSayWhy) {
  auto message = [](std::string_view spec) {
    try {
      parse_topology(spec, 4);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message("torus:2x1"), "--topology torus:2x1: 2 hosts for 4 ranks");
  EXPECT_EQ(message("torus:2x0"), "--topology torus:2x0: '0' is not a positive integer");
  EXPECT_EQ(message("torus:2xa"), "--topology torus:2xa: 'a' is not a positive integer");
  EXPECT_EQ(message("torus:99999999999999999999"),
            "--topology torus:99999999999999999999: '99999999999999999999' is not a positive "
            "integer");
  EXPECT_EQ(message("fat-tree:2;4;1,1;1,1"),
            "--topology fat-tree:2;4;1,1;1,1: every list needs 2 values (one per level)");
  EXPECT_EQ(message("dragonfly:2;2;2;2"),
            "--topology dragonfly:2;2;2;2: dragonfly takes "
            "GROUPS,LINKS;CHASSIS,LINKS;ROUTERS,LINKS;NODES");
  EXPECT_EQ(message("ring"),
            "--topology ring: unknown topology 'ring' (flat, torus, fat-tree or dragonfly)");
  EXPECT_EQ(message("torus:1024x1024x1024"), "--topology torus:1024x1024x1024: too many hosts");
}

TEST(ExportPlatform, RankMaps) {
  EXPECT_EQ(parse_map("", 3, 3), (std::vector<std::uint64_t>{0, 1, 2}));
  EXPECT_EQ(parse_map("3,0,1", 3, 4), (std::vector<std::uint64_t>{3, 0, 1}));
  EXPECT_THROW(parse_map("0,4", 2, 4), Error);  // host outside the cluster
  EXPECT_THROW(parse_map("0", 2, 4), Error);    // one index for two ranks
  EXPECT_THROW(parse_map("0,,1", 2, 4), Error);
  EXPECT_THROW(parse_map("0,-1", 2, 4), Error);
}

TEST(ExportPlatform, UnitsAndXml) {
  EXPECT_NO_THROW(check_unit("--bandwidth", "10GBps"));
  EXPECT_NO_THROW(check_unit("--bandwidth", "1.5e3MBps"));
  EXPECT_NO_THROW(check_unit("--bandwidth", "100Gbps"));
  EXPECT_NO_THROW(check_unit("--latency", "1us"));
  EXPECT_THROW(check_unit("--bandwidth", "10"), Error);
  EXPECT_THROW(check_unit("--bandwidth", "1us"), Error);
  EXPECT_THROW(check_unit("--latency", "fast"), Error);
  const std::string xml = platform_xml(parse_topology("torus:2x2", 4), {"1GBps", "2us", 5e9});
  EXPECT_NE(xml.find(R"(<cluster id="cluster" prefix="node-" radical="0-3" suffix="" )"
                     R"(speed="5000000000f" bw="1GBps" lat="2us" topology="TORUS" )"
                     R"(topo_parameters="2,2"/>)"),
            std::string::npos)
      << xml;
  EXPECT_EQ(platform_xml(parse_topology("flat", 2), {}).find("topology="), std::string::npos);
  EXPECT_EQ(host_name(7), "node-7");
}

}  // namespace
}  // namespace encore::exporter
