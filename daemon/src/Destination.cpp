#include "mtm/daemon/Destination.h"

#include <algorithm>

#include "mtm/Parse.h"

namespace mtm::daemon {
namespace {

// A tier's nodes, most free memory first.
std::vector<int> byFreeMemory(const config::Tier& tier, const config::Topology& topo) {
  std::vector<int> nodes = tier.nodes;
  std::stable_sort(nodes.begin(), nodes.end(), [&](int a, int b) { return topo.node(a)->freeBytes > topo.node(b)->freeBytes; });
  return nodes;
}

std::string tierList(const config::TierMap& tiers) {
  std::string s;
  for (const auto& t : tiers.tiers) s += (s.empty() ? "" : ", ") + std::to_string(t.index) + " (" + t.name + ")";
  return s;
}

}  // namespace

Result<Destination> resolveDestination(std::string_view spec, const config::TierMap& tiers, const config::Topology& topo, bool lowerTiers) {
  int tierIndex = -1;
  std::vector<int> ordered;
  if (spec.substr(0, 5) == "tier:") {
    const auto which = spec.substr(5);
    for (const auto& t : tiers.tiers)
      if (t.name == which || std::to_string(t.index) == which) tierIndex = t.index;
    if (tierIndex < 0) return Error("no tier \"" + std::string(which) + "\" (tiers: " + tierList(tiers) + ")");
    ordered = byFreeMemory(tiers.tiers[tierIndex], topo);
  } else {
    auto node = parseUnsigned(spec);
    if (!node) return Error("expected NODE or tier:N, got \"" + std::string(spec) + "\"");
    const int n = static_cast<int>(*node);
    const auto* info = topo.node(n);
    if (info == nullptr || !info->hasMemory)
      return Error("node " + std::to_string(n) +
                   " is not a memory node of this machine (memory nodes: " + formatNodeList(topo.memoryNodes()) + ")");
    tierIndex = tiers.tierOfNode(n);
    if (tierIndex < 0) return Error("node " + std::to_string(n) + " is in no tier mtm manages (see tiers.list)");
    ordered.push_back(n);
    if (lowerTiers)
      for (int other : byFreeMemory(tiers.tiers[tierIndex], topo))
        if (other != n) ordered.push_back(other);
  }
  if (lowerTiers)
    for (size_t t = static_cast<size_t>(tierIndex) + 1; t < tiers.tiers.size(); ++t)
      for (int n : byFreeMemory(tiers.tiers[t], topo)) ordered.push_back(n);
  return Destination{ordered.front(), std::vector<int>(ordered.begin() + 1, ordered.end())};
}

}  // namespace mtm::daemon
