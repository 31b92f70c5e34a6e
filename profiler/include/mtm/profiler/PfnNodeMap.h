#pragma once
// Which NUMA node holds a page frame: from the memory blocks each node lists in sysfs
// (/sys/devices/system/node/nodeN/memoryM, /sys/devices/system/memory/block_size_bytes).

#include <chrono>
#include <cstdint>
#include <vector>

#include "mtm/KernelFs.h"

namespace mtm::profiler {

class PfnNodeMap {
 public:
  static PfnNodeMap read(const KernelFs& fs);
  int nodeOf(uint64_t pfn) const;  // -1 when unknown
  bool empty() const { return blockNode_.empty(); }
  size_t blocks() const;  // memory blocks a node lists

 private:
  uint64_t blockPages_ = 0;
  std::vector<int> blockNode_;  // memory block index -> node
};

// A PfnNodeMap kept current. Memory brought online after it was read -- CXL memory onlined with
// daxctl, a hot-added DIMM or virtio-mem -- lies in blocks it does not list, and a page there
// would read as on no node (never planned). A page frame in an unknown block is such memory, or
// a map that could not be read: either makes it read sysfs again, at most once per `minAge`.
class LivePfnNodeMap {
 public:
  using Clock = std::chrono::steady_clock;
  explicit LivePfnNodeMap(KernelFs fs, Clock::duration minAge = std::chrono::seconds(10)) : fs_(std::move(fs)), minAge_(minAge) {}
  int nodeOf(uint64_t pfn, Clock::time_point now);
  // Reads sysfs now, where it was never read (attaching a process: not in an interval's cost).
  void readOnce(Clock::time_point now);
  uint64_t reads() const { return reads_; }

 private:
  KernelFs fs_;
  void reread(Clock::time_point now);

  Clock::duration minAge_;
  PfnNodeMap map_;
  Clock::time_point readAt_{};
  uint64_t reads_ = 0;
};

}  // namespace mtm::profiler
