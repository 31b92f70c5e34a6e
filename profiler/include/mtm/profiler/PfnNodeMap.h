#pragma once
// Which NUMA node holds a page frame: from the memory blocks each node lists in sysfs
// (/sys/devices/system/node/nodeN/memoryM, /sys/devices/system/memory/block_size_bytes).

#include <cstdint>
#include <vector>

#include "mtm/KernelFs.h"

namespace mtm::profiler {

class PfnNodeMap {
 public:
  static PfnNodeMap read(const KernelFs& fs);
  int nodeOf(uint64_t pfn) const;  // -1 when unknown
  bool empty() const { return blockNode_.empty(); }

 private:
  uint64_t blockPages_ = 0;
  std::vector<int> blockNode_;  // memory block index -> node
};

}  // namespace mtm::profiler
