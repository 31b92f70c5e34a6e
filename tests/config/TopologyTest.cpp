#include <catch2/catch.hpp>

#include <filesystem>

#include "Run.h"
#include "mtm/config/Topology.h"

using namespace mtm;
using namespace mtm::config;
namespace fs = std::filesystem;

namespace {

// A writable copy of a fixture tree, to break on purpose.
struct Broken {
  test::TempDir dir;
  explicit Broken(const std::string& name) { fs::copy(test::fixture(name), dir.path(), fs::copy_options::recursive); }
  void remove(const std::string& path) const { fs::remove_all(dir.path() + path); }
  void write(const std::string& path, const std::string& text) const { dir.write(path.substr(1), text); }
  KernelFs kfs() const { return KernelFs(dir.path()); }
};

}  // namespace

TEST_CASE("a 4-node 6.12 guest: nodes, CPUs, sizes, distances, HMAT, kernel tiers, THP", "[topology]") {
  auto topo = discoverTopology(KernelFs(test::fixture("vm-6.12-4node-hmat")));
  REQUIRE(topo.ok());
  REQUIRE(topo->nodes.size() == 4);
  CHECK(topo->cpuNodes() == std::vector<int>{0});
  CHECK(topo->memoryNodes() == std::vector<int>{0, 1, 2, 3});
  const auto& n1 = *topo->node(1);
  CHECK(n1.cpus.empty());
  CHECK(n1.totalBytes > 400ull << 20);
  CHECK(n1.totalBytes <= 512ull << 20);
  CHECK(n1.freeBytes <= n1.totalBytes);
  CHECK(n1.distance == std::map<int, int>{{0, 20}, {1, 10}, {2, 20}, {3, 30}});
  REQUIRE(n1.hmat.has_value());
  CHECK(*n1.hmat == HmatAccess{180, 180, 20480, 20480});
  CHECK(n1.kernelTier == 20);
  CHECK(topo->kernelTiers == std::map<int, std::vector<int>>{{4, {0}}, {20, {1}}, {63, {2}}, {180, {3}}});
  REQUIRE(topo->thp.has_value());
  CHECK(topo->thp->enabled == "always");
  CHECK(topo->thp->pmdSizeBytes == 2u << 20);
  CHECK(topo->notes.empty());
}

TEST_CASE("the 1-node host: one node with CPUs, no HMAT", "[topology]") {
  auto topo = discoverTopology(KernelFs(test::fixture("host-6.18-1node")));
  REQUIRE(topo.ok());
  REQUIRE(topo->nodes.size() == 1);
  CHECK(topo->nodes[0].cpus.size() >= 1);
  CHECK_FALSE(topo->nodes[0].hmat.has_value());
  CHECK(topo->thp->enabled == "madvise");
}

TEST_CASE("missing or malformed kernel files give a note or a clear error", "[topology]") {
  SECTION("no memory_tiering directory (kernel before 6.1)") {
    Broken b("vm-6.12-4node-hmat");
    b.remove("/sys/devices/virtual/memory_tiering");
    auto topo = discoverTopology(b.kfs());
    REQUIRE(topo.ok());
    CHECK(topo->kernelTiers.empty());
    CHECK(topo->notes ==
          std::vector<std::string>{"no kernel memory tiers (/sys/devices/virtual/memory_tiering missing; Linux 6.1+ has it)"});
  }
  SECTION("no /proc/zoneinfo: no kernel reserve, and a note that says so") {
    Broken b("vm-6.12-4node-hmat");
    b.remove("/proc/zoneinfo");
    auto topo = discoverTopology(b.kfs());
    REQUIRE(topo.ok());
    CHECK(topo->node(0)->kernelReserveBytes == 0);
    REQUIRE(topo->notes.size() == 1);
    CHECK(topo->notes[0].rfind("no /proc/zoneinfo (", 0) == 0);
    CHECK(topo->notes[0].find("the kernel's free-memory reserve on each node is unknown") != std::string::npos);
  }
  SECTION("no NUMA sysfs at all: one node from /proc/meminfo") {
    Broken b("host-6.18-1node");
    b.remove("/sys/devices/system/node");
    auto topo = discoverTopology(b.kfs());
    REQUIRE(topo.ok());
    REQUIRE(topo->nodes.size() == 1);
    CHECK(topo->nodes[0].totalBytes > 0);
    CHECK(topo->notes.front() == "no NUMA sysfs (/sys/devices/system/node missing): one node from /proc/meminfo");
  }
  SECTION("a malformed online list is an error naming the file") {
    Broken b("vm-6.12-4node-hmat");
    b.write("/sys/devices/system/node/online", "zero-three\n");
    auto topo = discoverTopology(b.kfs());
    REQUIRE_FALSE(topo.ok());
    CHECK(topo.error().message() ==
          "/sys/devices/system/node/online: expected a node list like 0,2-3, got \"zero-three\" -- while discovering NUMA nodes");
  }
  SECTION("a malformed meminfo is an error naming the file and line") {
    Broken b("vm-6.12-4node-hmat");
    b.write("/sys/devices/system/node/node2/meminfo", "Node 2 MemTotal: 5 kB\n???\n");
    auto topo = discoverTopology(b.kfs());
    REQUIRE_FALSE(topo.ok());
    CHECK(topo.error().message() == "/sys/devices/system/node/node2/meminfo: line 2: expected \"Node N Key: value [kB]\", got \"???\"");
  }
  SECTION("a malformed tier nodelist is ignored with a note") {
    Broken b("vm-6.12-4node-hmat");
    b.write("/sys/devices/virtual/memory_tiering/memory_tier63/nodelist", "two\n");
    auto topo = discoverTopology(b.kfs());
    REQUIRE(topo.ok());
    CHECK(topo->kernelTiers.size() == 3);
    CHECK(topo->notes.at(0).rfind("ignored memory_tier63: /sys/devices/virtual/memory_tiering/memory_tier63/nodelist: expected a node list",
                                  0) == 0);
  }
  SECTION("a short distance row and missing HMAT files") {
    Broken b("vm-6.12-4node-hmat");
    b.write("/sys/devices/system/node/node3/distance", "40 30\n");
    b.remove("/sys/devices/system/node/node3/access0");
    auto topo = discoverTopology(b.kfs());
    REQUIRE(topo.ok());
    CHECK(topo->node(3)->distance.empty());
    CHECK_FALSE(topo->node(3)->hmat.has_value());
    CHECK(topo->notes.at(0) == "node3: no usable distance row (expected 4 entries)");
  }
  SECTION("no THP") {
    Broken b("vm-6.12-4node-hmat");
    b.remove("/sys/kernel/mm/transparent_hugepage");
    auto topo = discoverTopology(b.kfs());
    REQUIRE(topo.ok());
    CHECK_FALSE(topo->thp.has_value());
  }
}
