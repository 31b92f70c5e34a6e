#include "mtm/profiler/PfnNodeMap.h"

#include <cstdlib>

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

}  // namespace mtm::profiler
