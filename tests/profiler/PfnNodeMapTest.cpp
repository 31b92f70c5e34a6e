#include <catch2/catch.hpp>

#include <filesystem>

#include "Run.h"
#include "mtm/profiler/PfnNodeMap.h"

using namespace mtm;

TEST_CASE("page frames map to the node that lists their memory block", "[pfn]") {
  test::TempDir dir;
  dir.write("sys/devices/system/memory/block_size_bytes", "8000000\n");  // 128 MiB
  for (auto [node, block] : {std::pair{0, 0}, {0, 1}, {1, 2}, {2, 4}})
    std::filesystem::create_directories(dir.path() + "/sys/devices/system/node/node" + std::to_string(node) + "/memory" +
                                        std::to_string(block));
  std::filesystem::create_directories(dir.path() + "/sys/devices/system/node/node0/memory_failure");
  auto map = profiler::PfnNodeMap::read(KernelFs(dir.path()));
  const uint64_t pagesPerBlock = (128ull << 20) / 4096;
  CHECK(map.nodeOf(0) == 0);
  CHECK(map.nodeOf(pagesPerBlock + 5) == 0);
  CHECK(map.nodeOf(2 * pagesPerBlock) == 1);
  CHECK(map.nodeOf(3 * pagesPerBlock) == -1);  // a hole
  CHECK(map.nodeOf(4 * pagesPerBlock + 1) == 2);
  CHECK(map.nodeOf(100 * pagesPerBlock) == -1);
  CHECK(profiler::PfnNodeMap::read(KernelFs("/nonexistent")).empty());
}

TEST_CASE("memory brought online after the map was read maps to its node once a page is found there", "[pfn]") {
  test::TempDir dir;
  dir.write("sys/devices/system/memory/block_size_bytes", "8000000\n");  // 128 MiB
  auto online = [&](int node, int block) {
    std::filesystem::create_directories(dir.path() + "/sys/devices/system/node/node" + std::to_string(node) + "/memory" +
                                        std::to_string(block));
  };
  online(0, 0);
  const uint64_t pagesPerBlock = (128ull << 20) / 4096;
  using Clock = profiler::LivePfnNodeMap::Clock;
  profiler::LivePfnNodeMap map(KernelFs(dir.path()), std::chrono::seconds(10));
  const Clock::time_point t0{};
  map.readOnce(t0);
  CHECK(map.reads() == 1);
  map.readOnce(t0 + std::chrono::seconds(60));
  CHECK(map.reads() == 1);  // once
  CHECK(map.nodeOf(5, t0) == 0);
  // CXL memory onlined as node 2 (daxctl): its frames are unknown until the map is read again,
  // which a frame there makes happen at most once per ten seconds.
  online(2, 8);
  CHECK(map.nodeOf(8 * pagesPerBlock + 1, t0 + std::chrono::seconds(1)) == -1);
  CHECK(map.reads() == 1);
  CHECK(map.nodeOf(8 * pagesPerBlock + 1, t0 + std::chrono::seconds(11)) == 2);
  CHECK(map.reads() == 2);
  CHECK(map.nodeOf(8 * pagesPerBlock + 2, t0 + std::chrono::seconds(30)) == 2);
  CHECK(map.nodeOf(5, t0 + std::chrono::seconds(30)) == 0);
  CHECK(map.reads() == 2);  // known frames read nothing
  // A frame in no block listed (the map could not know it) rereads at most every ten seconds.
  CHECK(map.nodeOf(100 * pagesPerBlock, t0 + std::chrono::seconds(22)) == -1);
  CHECK(map.reads() == 3);
  CHECK(map.nodeOf(100 * pagesPerBlock, t0 + std::chrono::seconds(25)) == -1);
  CHECK(map.reads() == 3);
}

TEST_CASE("a map that could not be read at first is read again when a page is checked", "[pfn]") {
  test::TempDir dir;
  using Clock = profiler::LivePfnNodeMap::Clock;
  profiler::LivePfnNodeMap map(KernelFs(dir.path()), std::chrono::seconds(10));
  const Clock::time_point t0{};
  map.readOnce(t0);
  CHECK(map.nodeOf(0, t0) == -1);
  dir.write("sys/devices/system/memory/block_size_bytes", "8000000\n");
  std::filesystem::create_directories(dir.path() + "/sys/devices/system/node/node1/memory0");
  CHECK(map.nodeOf(0, t0 + std::chrono::seconds(10)) == 1);
}
