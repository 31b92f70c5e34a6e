#include <catch2/catch.hpp>

#include <filesystem>

#include "Run.h"
#include "mtm/config/ConfigLoader.h"
#include "mtm/config/TierMap.h"

using namespace mtm;
using namespace mtm::config;

namespace {

Topology topologyOf(const std::string& fixture) {
  auto topo = discoverTopology(KernelFs(test::fixture(fixture)));
  REQUIRE(topo.ok());
  return *topo;
}

std::vector<std::vector<int>> nodesOf(const TierMap& map) {
  std::vector<std::vector<int>> out;
  for (const auto& t : map.tiers) out.push_back(t.nodes);
  return out;
}

TiersConfig tiersFrom(const std::string& yaml) {
  auto cfg = parseConfig(yaml, "t.yaml");
  REQUIRE(cfg.ok());
  return cfg->tiers;
}

}  // namespace

TEST_CASE("kernel memory tiers come first: a 6.12 guest forms 4 tiers, fastest first", "[tiers]") {
  auto map = buildTierMap(topologyOf("vm-6.12-4node-hmat"), TiersConfig{});
  REQUIRE(map.ok());
  CHECK(map->source == TierSource::Kernel);
  CHECK(nodesOf(*map) == std::vector<std::vector<int>>{{0}, {1}, {2}, {3}});
  for (int i = 0; i < 4; ++i) {
    const auto& t = map->tiers[i];
    CHECK(t.index == i);
    CHECK(t.name == "tier" + std::to_string(i));
    CHECK(t.capacityBytes == t.totalBytes);
    CHECK(t.lowWatermark == Approx(0.02));
  }
  CHECK(map->tiers[1].readLatencyNs == 180u);
  CHECK(map->tiers[3].readBandwidthMBps == 5120u);
  CHECK(map->tiers[2].minDistance == 30);
  CHECK(map->tiers[2].kernelTier == 63);
  REQUIRE(map->notes.size() == 2);
  CHECK(map->notes[0] == "tiers from kernel: 0 > 1 > 2 > 3");
  // This guest has THP on: the kernel keeps 6-7% of each node free, above the 2% default.
  CHECK(map->notes[1] ==
        "low_watermark is below the free memory the kernel keeps on the nodes of tier0 (10.0 MiB < 33.1 MiB), "
        "tier1 (10.1 MiB < 31.3 MiB), tier2 (10.1 MiB < 31.3 MiB), tier3 (9.3 MiB < 23.6 MiB): moves into them "
        "may find them full (ENOMEM) and go to the next tier; a low_watermark of 6.6% or more avoids that");
  map = buildTierMap(topologyOf("vm-6.12-4node-hmat"), tiersFrom("tiers: {low_watermark: 6.6%, high_watermark: 10%}\n"));
  REQUIRE(map.ok());
  CHECK(map->notes == std::vector<std::string>{"tiers from kernel: 0 > 1 > 2 > 3"});
  CHECK(map->tierOfNode(2) == 2);
  CHECK(map->tierOfNode(9) == -1);
}

TEST_CASE("when sources disagree the kernel wins and the disagreement is noted", "[tiers]") {
  // Linux 6.1 puts every node in one tier although HMAT ranks them.
  auto map = buildTierMap(topologyOf("vm-6.1-4node-hmat"), TiersConfig{});
  REQUIRE(map.ok());
  CHECK(map->source == TierSource::Kernel);
  CHECK(nodesOf(*map) == std::vector<std::vector<int>>{{0, 1, 2, 3}});
  CHECK(map->notes == std::vector<std::string>{"tiers from kernel: 0-3",
                                              "hmat would rank nodes as 0 > 1 > 2 > 3; kernel wins",
                                              "distance would rank nodes as 0 > 1 > 2 > 3; kernel wins"});
  SECTION("and the config can insist on HMAT") {
    auto hmat = buildTierMap(topologyOf("vm-6.1-4node-hmat"), tiersFrom("tiers: {discovery: hmat}"));
    REQUIRE(hmat.ok());
    CHECK(hmat->source == TierSource::Hmat);
    CHECK(nodesOf(*hmat) == std::vector<std::vector<int>>{{0}, {1}, {2}, {3}});
  }
}

TEST_CASE("without kernel tiers HMAT ranks, without HMAT distances do", "[tiers]") {
  test::TempDir dir;
  std::filesystem::copy(test::fixture("vm-6.12-4node-hmat"), dir.path(), std::filesystem::copy_options::recursive);
  std::filesystem::remove_all(dir.path() + "/sys/devices/virtual/memory_tiering");
  auto noKernel = discoverTopology(KernelFs(dir.path()));
  REQUIRE(noKernel.ok());
  auto map = buildTierMap(*noKernel, TiersConfig{});
  REQUIRE(map.ok());
  CHECK(map->source == TierSource::Hmat);
  CHECK(nodesOf(*map) == std::vector<std::vector<int>>{{0}, {1}, {2}, {3}});
  CHECK(map->notes.front() == "not using kernel: the kernel reports no memory tiers");

  auto forced = buildTierMap(*noKernel, tiersFrom("tiers: {discovery: kernel}"));
  REQUIRE_FALSE(forced.ok());
  CHECK(forced.error().message() == "tiers.discovery is kernel but the kernel reports no memory tiers");

  for (int n = 0; n < 4; ++n)
    std::filesystem::remove_all(dir.path() + "/sys/devices/system/node/node" + std::to_string(n) + "/access0");
  auto noHmat = discoverTopology(KernelFs(dir.path()));
  REQUIRE(noHmat.ok());
  auto byDistance = buildTierMap(*noHmat, TiersConfig{});
  REQUIRE(byDistance.ok());
  CHECK(byDistance->source == TierSource::Distance);
  CHECK(nodesOf(*byDistance) == std::vector<std::vector<int>>{{0}, {1}, {2}, {3}});
  CHECK(byDistance->notes.at(1) == "not using hmat: node0 has no HMAT access attributes");
}

TEST_CASE("one node is one tier", "[tiers]") {
  auto map = buildTierMap(topologyOf("host-6.18-1node"), TiersConfig{});
  REQUIRE(map.ok());
  CHECK(nodesOf(*map) == std::vector<std::vector<int>>{{0}});
}

TEST_CASE("tiers.list pins nodes to tiers, caps capacity and sets watermarks", "[tiers]") {
  auto map = buildTierMap(topologyOf("vm-6.12-4node-hmat"), tiersFrom(R"(
tiers:
  list:
    - {name: fast, nodes: "0-1", capacity: 256MiB, high_watermark: 10%}
    - {name: slow, nodes: 3}
)"));
  REQUIRE(map.ok());
  CHECK(map->source == TierSource::Config);
  CHECK(nodesOf(*map) == std::vector<std::vector<int>>{{0, 1}, {3}});
  CHECK(map->tiers[0].name == "fast");
  CHECK(map->tiers[0].capacityBytes == 256ull << 20);
  CHECK(map->tiers[0].highWatermark == Approx(0.10));
  CHECK(map->tiers[0].lowWatermark == Approx(0.02));
  CHECK_FALSE(map->tiers[0].kernelTier.has_value());  // nodes 0 and 1 sit in different kernel tiers
  CHECK(map->unmanagedNodes == std::vector<int>{2});
  CHECK(std::count(map->notes.begin(), map->notes.end(), "nodes 2 are in no tier: mtm leaves their pages alone") == 1);
}

TEST_CASE("a config that does not fit the machine is refused with its line", "[tiers]") {
  const auto topo = topologyOf("vm-6.12-4node-hmat");
  auto missing = buildTierMap(topo, tiersFrom("tiers:\n  list:\n    - {name: a, nodes: 7}\n"));
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().message() == "t.yaml:3: tiers.list: node 7 is not on this machine (memory nodes: 0-3)");
  auto tooBig = buildTierMap(topo, tiersFrom("tiers:\n  list:\n    - {name: a, nodes: 1, capacity: 1TiB}\n"));
  REQUIRE_FALSE(tooBig.ok());
  CHECK(tooBig.error().message().rfind("t.yaml:3: tiers.list: capacity 1.0 TiB is above the ", 0) == 0);
  CHECK(tooBig.error().message().find("that nodes 1 have") != std::string::npos);
  auto lowAboveHigh = buildTierMap(topo, tiersFrom("tiers:\n  high_watermark: 3%\n  list:\n    - {name: a, nodes: 1, low_watermark: 4%}\n"));
  REQUIRE_FALSE(lowAboveHigh.ok());
  CHECK(lowAboveHigh.error().message() == "t.yaml:4: tiers.list: low_watermark is above high_watermark");
}
