#pragma once
// The memory tiers mtm manages, fastest first, built from the discovered topology and the
// config. Precedence (docs/tiers.md): tiers.list in the config > the kernel's memory tiers
// (unless HMAT or distances split nodes they lump together) > HMAT access attributes > SLIT
// distances > one tier of everything. Low watermarks are raised above the kernel's reserve.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mtm/Result.h"
#include "mtm/config/Config.h"
#include "mtm/config/Topology.h"

namespace mtm::config {

enum class TierSource { Config, Kernel, Hmat, Distance, Single };
const char* tierSourceName(TierSource source);

struct Tier {
  int index = 0;  // 0 = fastest
  std::string name;
  std::vector<int> nodes;
  uint64_t totalBytes = 0;     // memory of its nodes
  uint64_t capacityBytes = 0;  // what mtm may fill: tiers.list[].capacity or total
  uint64_t freeBytes = 0;
  uint64_t kernelReserveBytes = 0;  // of its nodes (ZoneReserve.h), read once at discovery
  double lowWatermark = 0;          // effective: at least the kernel's reserve + 1% (TierMap.cpp)
  double highWatermark = 0;
  std::optional<uint64_t> readLatencyNs;      // HMAT, worst node of the tier
  std::optional<uint64_t> readBandwidthMBps;  // HMAT, worst node of the tier
  std::optional<int> minDistance;             // SLIT distance from the nearest CPU node
  std::optional<int> kernelTier;              // memory_tierN id, when all its nodes share one

  // The free memory the tier keeps: its low watermark's share of its capacity.
  int64_t lowWatermarkBytes() const { return static_cast<int64_t>(lowWatermark * double(capacityBytes)); }
};

struct TierMap {
  std::vector<Tier> tiers;
  TierSource source = TierSource::Single;
  std::vector<int> unmanagedNodes;  // memory nodes left out by tiers.list
  std::vector<std::string> notes;   // how the tiers were formed and what disagreed

  // Index of the tier holding `node`, or -1.
  int tierOfNode(int node) const;
};

Result<TierMap> buildTierMap(const Topology& topology, const TiersConfig& config);

// Re-reads every tier's free memory. A tier with a capacity below its nodes' memory counts as
// free only what is left of that capacity: capacity - (total - free), never below 0.
Status refreshFreeMemory(TierMap& map, const KernelFs& fs);

}  // namespace mtm::config
