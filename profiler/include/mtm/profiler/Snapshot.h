#pragma once
// What the profiler hands the policy each interval: regions of the targets' address spaces and
// how hot each one is. Policies see the system only through this.

#include <cstdint>
#include <vector>

namespace mtm::profiler {

struct Region {
  int pid = 0;
  uint64_t start = 0;          // page-aligned virtual addresses, [start, end)
  uint64_t end = 0;
  double hotness = 0;          // decayed fraction of samples that saw it accessed, [0, 1]
  int node = -1;               // NUMA node holding most of it
};

struct Snapshot {
  uint64_t interval = 0;
  std::vector<Region> regions;
};

}  // namespace mtm::profiler
