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
