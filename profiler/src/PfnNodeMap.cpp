#include "mtm/profiler/PfnNodeMap.h"

#include <algorithm>
#include <cstdlib>

#include "mtm/Log.h"
#include "mtm/Parse.h"

namespace mtm::profiler {

PfnNodeMap PfnNodeMap::read(const KernelFs& fs) {
  PfnNodeMap map;
  auto size = fs.read("/sys/devices/system/memory/block_size_bytes");
  if (!size) return map;
  const uint64_t blockBytes = std::strtoull(std::string(trim(*size)).c_str(), nullptr, 16);
  if (blockBytes < 4096) return map;
  map.blockPages_ = blockBytes / 4096;
  auto nodes = fs.list("/sys/devices/system/node");
  if (!nodes) return map;
  for (const auto& name : *nodes) {
    if (name.rfind("node", 0) != 0) continue;
    auto id = parseUnsigned(name.substr(4));
    if (!id) continue;
    auto entries = fs.list("/sys/devices/system/node/" + name);
    if (!entries) continue;
    for (const auto& e : *entries) {
      if (e.rfind("memory", 0) != 0) continue;
      auto block = parseUnsigned(e.substr(6));
      if (!block) continue;  // memory_failure, memory_side_cache ...
      if (*block >= map.blockNode_.size()) map.blockNode_.resize(*block + 1, -1);
      map.blockNode_[*block] = static_cast<int>(*id);
    }
  }
  return map;
}

int PfnNodeMap::nodeOf(uint64_t pfn) const {
  if (blockPages_ == 0) return -1;
  const uint64_t block = pfn / blockPages_;
  return block < blockNode_.size() ? blockNode_[block] : -1;
}

size_t PfnNodeMap::blocks() const {
  return static_cast<size_t>(std::count_if(blockNode_.begin(), blockNode_.end(), [](int node) { return node >= 0; }));
}

int LivePfnNodeMap::nodeOf(uint64_t pfn, Clock::time_point now) {
  const int node = map_.nodeOf(pfn);
  if (node >= 0 || (reads_ > 0 && now - readAt_ < minAge_)) return node;
  reread(now);
  return map_.nodeOf(pfn);
}

void LivePfnNodeMap::readOnce(Clock::time_point now) {
  if (reads_ == 0) reread(now);
}

void LivePfnNodeMap::reread(Clock::time_point now) {
  const size_t before = map_.blocks();
  map_ = PfnNodeMap::read(fs_);
  readAt_ = now;
  if (reads_++ > 0 && map_.blocks() != before)
    MTM_INFO("profiler: memory blocks online changed from {} to {}: page frames map to nodes afresh", before, map_.blocks());
  else if (map_.empty() && reads_ == 1)
    MTM_WARN("profiler: sysfs lists no memory block of any node (a kernel without memory hotplug?): the pages checked read as on no node");
}

}  // namespace mtm::profiler
