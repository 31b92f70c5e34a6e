#pragma once
// Where `mtmctl migrate --to` sends pages: "NODE" or "tier:N" / "tier:NAME", and the nodes to
// try when that one is full.

#include <string_view>
#include <vector>

#include "mtm/Result.h"
#include "mtm/config/TierMap.h"
#include "mtm/config/Topology.h"

namespace mtm::daemon {

struct Destination {
  int node = -1;
  std::vector<int> fallbackNodes;
};

// tier:N picks the tier's node with the most free memory, then its other nodes. A node picks
// itself. With `lowerTiers`, the nodes of each slower tier follow, fastest first.
Result<Destination> resolveDestination(std::string_view spec, const config::TierMap& tiers, const config::Topology& topology,
                                       bool lowerTiers);

}  // namespace mtm::daemon
