#include <catch2/catch.hpp>

#include <algorithm>
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
  }
  CHECK(map->tiers[1].readLatencyNs == 180u);
  CHECK(map->tiers[3].readBandwidthMBps == 5120u);
  CHECK(map->tiers[2].minDistance == 30);
  CHECK(map->tiers[2].kernelTier == 63);
  REQUIRE(map->notes.size() == 2);
  CHECK(map->notes[0] == "tiers from kernel: 0 > 1 > 2 > 3");
  // This guest has THP on: the kernel keeps 6-7% of each node free, above the 2% default. The
  // policy plans against that reserve plus 1%, and the high watermark keeps its 3% above.
  CHECK(map->notes[1] ==
        "low_watermark raised above the free memory the kernel keeps for itself, so that moves do not find a tier "
        "full (ENOMEM): tier0 2.0% -> 7.6% (33.1 MiB kept), tier1 2.0% -> 7.3% (31.3 MiB kept), tier2 2.0% -> 7.3% "
        "(31.3 MiB kept), tier3 2.0% -> 6.1% (23.6 MiB kept); high_watermark keeps its distance above it");
  CHECK(map->tiers[0].lowWatermark == Approx(0.076));
  CHECK(map->tiers[0].highWatermark == Approx(0.106));
  CHECK(map->tiers[3].lowWatermark == Approx(0.061));
  map = buildTierMap(topologyOf("vm-6.12-4node-hmat"), tiersFrom("tiers: {low_watermark: 8%, high_watermark: 10%}\n"));
  REQUIRE(map.ok());
  CHECK(map->notes == std::vector<std::string>{"tiers from kernel: 0 > 1 > 2 > 3"});
  CHECK(map->tiers[0].lowWatermark == Approx(0.08));
  CHECK(map->tierOfNode(2) == 2);
  CHECK(map->tierOfNode(9) == -1);
}

TEST_CASE("auto: where the kernel's tiers lump together nodes that HMAT tells apart, HMAT forms the tiers", "[tiers]") {
  // Linux 6.1 (Debian 12's own kernel) puts every node of the 4-node HMAT guest in one tier:
  // followed, nothing would ever move.
  auto map = buildTierMap(topologyOf("vm-6.1-4node-hmat"), TiersConfig{});
  REQUIRE(map.ok());
  CHECK(map->source == TierSource::Hmat);
  CHECK(nodesOf(*map) == std::vector<std::vector<int>>{{0}, {1}, {2}, {3}});
  CHECK(map->notes == std::vector<std::string>{"tiers from kernel: 0-3",
                                               "the kernel's tiers (0-3) lump together nodes that hmat tells apart: tiers from hmat: "
                                               "0 > 1 > 2 > 3 (tiers.discovery: kernel follows the kernel)"});
  SECTION("and the config can insist on the kernel's tiers") {
    auto kernel = buildTierMap(topologyOf("vm-6.1-4node-hmat"), tiersFrom("tiers: {discovery: kernel}"));
    REQUIRE(kernel.ok());
    CHECK(kernel->source == TierSource::Kernel);
    CHECK(nodesOf(*kernel) == std::vector<std::vector<int>>{{0, 1, 2, 3}});
  }
}

TEST_CASE("a source that ranks nodes differently from the kernel, not more finely, loses to it, noted", "[tiers]") {
  test::TempDir dir;
  std::filesystem::copy(test::fixture("vm-6.12-4node-hmat"), dir.path(), std::filesystem::copy_options::recursive);
  // HMAT says node 2 is faster than node 1; the kernel's tiers say otherwise.
  auto lat = [&](int n) { return dir.path() + "/sys/devices/system/node/node" + std::to_string(n) + "/access0/initiators/read_latency"; };
  dir.write(lat(1).substr(dir.path().size() + 1), "280\n");
  dir.write(lat(2).substr(dir.path().size() + 1), "180\n");
  auto topo = discoverTopology(KernelFs(dir.path()));
  REQUIRE(topo.ok());
  auto map = buildTierMap(*topo, TiersConfig{});
  REQUIRE(map.ok());
  CHECK(map->source == TierSource::Kernel);
  CHECK(nodesOf(*map) == std::vector<std::vector<int>>{{0}, {1}, {2}, {3}});
  CHECK(std::find(map->notes.begin(), map->notes.end(), "hmat would rank nodes as 0 > 2 > 1 > 3; kernel wins") != map->notes.end());
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
  CHECK(forced.error().message() == "t.yaml:1: tiers.discovery is kernel but the kernel reports no memory tiers");

  for (int n = 0; n < 4; ++n) std::filesystem::remove_all(dir.path() + "/sys/devices/system/node/node" + std::to_string(n) + "/access0");
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
  auto lowAboveHigh =
      buildTierMap(topo, tiersFrom("tiers:\n  high_watermark: 3%\n  list:\n    - {name: a, nodes: 1, low_watermark: 4%}\n"));
  REQUIRE_FALSE(lowAboveHigh.ok());
  CHECK(lowAboveHigh.error().message() == "t.yaml:4: tiers.list: low_watermark is above high_watermark");
}
