#include <catch2/catch.hpp>

#include "Run.h"
#include "mtm/config/TierMap.h"
#include "mtm/config/ZoneReserve.h"

using namespace mtm;
using namespace mtm::config;

TEST_CASE("the kernel's reserve on a node is each zone's low watermark + boost + largest lowmem reserve", "[tiers]") {
  SECTION("a 4-node 6.12 guest with THP: 6-7% of each node") {
    auto reserves = readZoneReserves(KernelFs(test::fixture("vm-6.12-4node-hmat")));
    REQUIRE(reserves.ok());
    // Node 0: DMA low 238 + protection 487, DMA32 low 7758; its empty Normal and Movable zones
    // list watermarks too, and count nothing.
    CHECK(*reserves ==
          std::map<int, uint64_t>{{0, (238 + 487 + 7758) * 4096ull}, {1, 8021 * 4096ull}, {2, 8021 * 4096ull}, {3, 6052 * 4096ull}});
  }
  SECTION("boost counts; a pageset's high: and a zone without pages do not") {
    const char* text =
        "Node 1, zone   Normal\n"
        "  pages free     1000\n"
        "        boost    16\n"
        "        min      50\n"
        "        low      60\n"
        "        high     70\n"
        "        managed  2000\n"
        "        protection: (0, 0, 5, 9)\n"
        "  pagesets\n"
        "    cpu: 0\n"
        "              count: 3\n"
        "              high:  900\n"
        "Node 1, zone  Movable\n"
        "  pages free     0\n"
        "        min      32\n"
        "        low      32\n"
        "        high     32\n"
        "        managed  0\n"
        "        protection: (0, 0, 0, 0)\n";
    CHECK(parseZoneReserves(text, 4096) == std::map<int, uint64_t>{{1, (60 + 16 + 9) * 4096ull}});
  }
}

TEST_CASE("a tier's kernel reserve is its nodes'", "[tiers]") {
  auto topo = discoverTopology(KernelFs(test::fixture("vm-6.12-4node-hmat")));
  REQUIRE(topo.ok());
  CHECK(topo->node(1)->kernelReserveBytes == 8021 * 4096ull);
  auto map = buildTierMap(*topo, TiersConfig{});
  REQUIRE(map.ok());
  REQUIRE(map->tiers.size() == 4);
  CHECK(map->tiers[3].kernelReserveBytes == 6052 * 4096ull);
}
