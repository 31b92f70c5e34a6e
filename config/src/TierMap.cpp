#include "mtm/config/TierMap.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "mtm/Parse.h"

namespace mtm::config {
namespace {

using Grouping = std::vector<std::vector<int>>;  // node groups, fastest first

// Kernel memory tiers: lower memory_tierN ids hold faster memory (abstract distance / 128).
std::optional<Grouping> byKernelTiers(const Topology& topo, std::string& why) {
  if (topo.kernelTiers.empty()) {
    why = "the kernel reports no memory tiers";
    return std::nullopt;
  }
  Grouping groups;
  for (const auto& [id, nodes] : topo.kernelTiers) {
    std::vector<int> withMemory;
    for (int n : nodes)
      if (const auto* node = topo.node(n); node && node->hasMemory) withMemory.push_back(n);
    if (!withMemory.empty()) groups.push_back(withMemory);
  }
  size_t covered = 0;
  for (const auto& g : groups) covered += g.size();
  if (covered != topo.memoryNodes().size()) {
    why = "the kernel's memory tiers do not cover every memory node";
    return std::nullopt;
  }
  return groups;
}

// HMAT: equal (read latency, read bandwidth) form a tier; lower latency first, then more bandwidth.
std::optional<Grouping> byHmat(const Topology& topo, std::string& why) {
  std::map<std::pair<uint64_t, int64_t>, std::vector<int>> classes;
  for (int id : topo.memoryNodes()) {
    const auto* node = topo.node(id);
    if (!node->hmat) {
      why = "node" + std::to_string(id) + " has no HMAT access attributes";
      return std::nullopt;
    }
    classes[{node->hmat->readLatencyNs, -static_cast<int64_t>(node->hmat->readBandwidthMBps)}].push_back(id);
  }
  Grouping groups;
  for (auto& [key, nodes] : classes) groups.push_back(nodes);
  return groups;
}

// SLIT distances: each memory node's distance from the nearest node with CPUs.
std::optional<int> distanceFromCpus(const Topology& topo, const NumaNode& node) {
  std::optional<int> best;
  for (int cpuNode : topo.cpuNodes()) {
    auto it = node.distance.find(cpuNode);
    if (it != node.distance.end() && (!best || it->second < *best)) best = it->second;
  }
  return best;
}

std::optional<Grouping> byDistance(const Topology& topo, std::string& why) {
  if (topo.cpuNodes().empty()) {
    why = "no node reports CPUs";
    return std::nullopt;
  }
  std::map<int, std::vector<int>> classes;
  for (int id : topo.memoryNodes()) {
    auto d = distanceFromCpus(topo, *topo.node(id));
    if (!d) {
      why = "node" + std::to_string(id) + " has no distance to a CPU node";
      return std::nullopt;
    }
    classes[*d].push_back(id);
  }
  Grouping groups;
  for (auto& [d, nodes] : classes) groups.push_back(nodes);
  return groups;
}

Tier describeTier(const Topology& topo, const std::vector<int>& nodes, const TiersConfig& config) {
  Tier t;
  t.nodes = nodes;
  t.lowWatermark = config.lowWatermark;
  t.highWatermark = config.highWatermark;
  std::optional<int> kernelTier;
  bool sameKernelTier = true;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const auto* node = topo.node(nodes[i]);
    t.totalBytes += node->totalBytes;
    t.freeBytes += node->freeBytes;
    t.kernelReserveBytes += node->kernelReserveBytes;
    if (node->hmat) {
      t.readLatencyNs = std::max(t.readLatencyNs.value_or(0), node->hmat->readLatencyNs);
      t.readBandwidthMBps = std::min(t.readBandwidthMBps.value_or(UINT64_MAX), node->hmat->readBandwidthMBps);
    }
    if (auto d = distanceFromCpus(topo, *node)) t.minDistance = std::max(t.minDistance.value_or(0), *d);
    if (i == 0)
      kernelTier = node->kernelTier;
    else if (node->kernelTier != kernelTier)
      sameKernelTier = false;
  }
  if (sameKernelTier) t.kernelTier = kernelTier;
  t.capacityBytes = t.totalBytes;
  return t;
}

std::string percent(double fraction) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f%%", fraction * 100);
  return text;
}

// A low watermark below the kernel's own reserve (ZoneReserve.h) would let the policy plan moves
// into memory the kernel does not hand out: move_pages(2) finds the node full (ENOMEM) and the
// mover falls back. The effective low watermark lies that reserve plus a margin above empty; the
// high one keeps its distance above the low one. One note for all tiers raised.
constexpr double kReserveMargin = 0.01;  // of the tier's capacity

void raiseWatermarksOverReserve(TierMap& map) {
  std::string raised;
  for (auto& t : map.tiers) {
    // A capacity below the nodes' memory leaves that much of them free already.
    const uint64_t headroom = t.totalBytes - std::min(t.totalBytes, t.capacityBytes);
    if (t.capacityBytes == 0 || t.kernelReserveBytes <= headroom) continue;
    const double reserve = double(t.kernelReserveBytes - headroom) / double(t.capacityBytes);
    const double needed = std::ceil((reserve + kReserveMargin) * 1000) / 1000;
    if (t.lowWatermark >= needed) continue;
    const double gap = t.highWatermark - t.lowWatermark;
    raised += (raised.empty() ? "" : ", ") + t.name + " " + percent(t.lowWatermark) + " -> " + percent(needed) + " (" +
              formatBytes(t.kernelReserveBytes) + " kept)";
    t.lowWatermark = needed;
    t.highWatermark = std::max(t.highWatermark, needed + gap);
  }
  if (raised.empty()) return;
  map.notes.push_back(
      "low_watermark raised above the free memory the kernel keeps for itself, so that moves do not "
      "find a tier full (ENOMEM): " +
      raised + "; high_watermark keeps its distance above it");
}

// Whether `fine` splits the groups of `coarse` and nothing else: more groups, each inside one of
// coarse's, in coarse's order.
bool refines(const Grouping& fine, const Grouping& coarse) {
  if (fine.size() <= coarse.size()) return false;
  size_t at = 0;
  for (const auto& group : fine) {
    auto inside = [&](size_t c) {
      return std::all_of(group.begin(), group.end(),
                         [&](int n) { return std::find(coarse[c].begin(), coarse[c].end(), n) != coarse[c].end(); });
    };
    while (at < coarse.size() && !inside(at)) ++at;
    if (at == coarse.size()) return false;
  }
  return true;
}

std::string describeGrouping(const Grouping& g) {
  std::string s;
  for (const auto& nodes : g) s += (s.empty() ? "" : " > ") + formatNodeList(nodes);
  return s;
}

Result<TierMap> fromConfigList(const Topology& topo, const TiersConfig& config) {
  TierMap map;
  map.source = TierSource::Config;
  const auto memoryNodes = topo.memoryNodes();
  std::vector<int> listed;
  for (const auto& spec : config.list) {
    for (int n : spec.nodes) {
      const auto* node = topo.node(n);
      if (node == nullptr || !node->hasMemory)
        return Error(spec.origin.text + ": tiers.list: node " + std::to_string(n) + (node ? " has no memory" : " is not on this machine") +
                     " (memory nodes: " + formatNodeList(memoryNodes) + ")");
      listed.push_back(n);
    }
    Tier t = describeTier(topo, spec.nodes, config);
    if (spec.capacityBytes > t.totalBytes)
      return Error(spec.origin.text + ": tiers.list: capacity " + formatBytes(spec.capacityBytes) + " is above the " +
                   formatBytes(t.totalBytes) + " that nodes " + formatNodeList(spec.nodes) + " have");
    if (spec.capacityBytes != 0) t.capacityBytes = spec.capacityBytes;
    t.name = spec.name;
    t.lowWatermark = spec.lowWatermark.value_or(config.lowWatermark);
    t.highWatermark = spec.highWatermark.value_or(config.highWatermark);
    if (t.lowWatermark > t.highWatermark) return Error(spec.origin.text + ": tiers.list: low_watermark is above high_watermark");
    map.tiers.push_back(t);
  }
  for (int n : memoryNodes)
    if (std::find(listed.begin(), listed.end(), n) == listed.end()) map.unmanagedNodes.push_back(n);
  map.notes.push_back("tiers from tiers.list (" + config.list.front().origin.text + ")");
  if (!map.unmanagedNodes.empty())
    map.notes.push_back("nodes " + formatNodeList(map.unmanagedNodes) + " are in no tier: mtm leaves their pages alone");
  return map;
}

}  // namespace

const char* tierSourceName(TierSource source) {
  switch (source) {
    case TierSource::Config:
      return "config";
    case TierSource::Kernel:
      return "kernel";
    case TierSource::Hmat:
      return "hmat";
    case TierSource::Distance:
      return "distance";
    case TierSource::Single:
      return "single";
  }
  return "?";
}

int TierMap::tierOfNode(int node) const {
  for (const auto& t : tiers)
    if (std::find(t.nodes.begin(), t.nodes.end(), node) != t.nodes.end()) return t.index;
  return -1;
}

Result<TierMap> buildTierMap(const Topology& topo, const TiersConfig& config) {
  if (topo.memoryNodes().empty()) return Error("no NUMA node has memory: nothing to manage");
  TierMap map;
  if (!config.list.empty()) {
    auto listed = fromConfigList(topo, config);
    if (!listed) return listed;
    map = std::move(*listed);
  } else {
    struct Candidate {
      TierSource source;
      std::optional<Grouping> (*group)(const Topology&, std::string&);
      Discovery mode;
    };
    const Candidate candidates[] = {{TierSource::Kernel, byKernelTiers, Discovery::Kernel},
                                    {TierSource::Hmat, byHmat, Discovery::Hmat},
                                    {TierSource::Distance, byDistance, Discovery::Distance}};
    std::optional<Grouping> chosen;
    for (const auto& c : candidates) {
      if (config.discovery != Discovery::Auto && config.discovery != c.mode) continue;
      std::string why;
      auto g = c.group(topo, why);
      if (!g) {
        if (config.discovery == c.mode)
          return Error(config.discoveryOrigin.text + ": tiers.discovery is " + tierSourceName(c.source) + " but " + why);
        map.notes.push_back(std::string("not using ") + tierSourceName(c.source) + ": " + why);
        continue;
      }
      if (!chosen) {
        chosen = g;
        map.source = c.source;
        map.notes.push_back(std::string("tiers from ") + tierSourceName(c.source) + ": " + describeGrouping(*g));
      } else if (map.source == TierSource::Kernel && refines(*g, *chosen)) {
        // Linux 6.1 puts all HMAT-described nodes in one tier: following it would move nothing.
        map.notes.push_back(std::string("the kernel's tiers (") + describeGrouping(*chosen) + ") lump together nodes that " +
                            tierSourceName(c.source) + " tells apart: tiers from " + tierSourceName(c.source) + ": " +
                            describeGrouping(*g) + " (tiers.discovery: kernel follows the kernel)");
        chosen = g;
        map.source = c.source;
      } else if (*g != *chosen) {
        map.notes.push_back(std::string(tierSourceName(c.source)) + " would rank nodes as " + describeGrouping(*g) + "; " +
                            tierSourceName(map.source) + " wins");
      }
    }
    if (!chosen) {
      chosen = Grouping{topo.memoryNodes()};
      map.source = TierSource::Single;
      map.notes.push_back("no source ranks the nodes: one tier of every memory node");
    }
    for (const auto& nodes : *chosen) map.tiers.push_back(describeTier(topo, nodes, config));
  }
  for (size_t i = 0; i < map.tiers.size(); ++i) {
    map.tiers[i].index = static_cast<int>(i);
    if (map.tiers[i].name.empty()) map.tiers[i].name = "tier" + std::to_string(i);
  }
  if (map.tiers.size() > 1) raiseWatermarksOverReserve(map);
  return map;
}

Status refreshFreeMemory(TierMap& map, const KernelFs& fs) {
  for (auto& tier : map.tiers) {
    uint64_t free = 0;
    for (int node : tier.nodes) {
      auto f = readNodeFreeBytes(fs, node);
      if (!f) return std::move(f).takeError().context("refreshing free memory of " + tier.name);
      free += *f;
    }
    const uint64_t used = tier.totalBytes > free ? tier.totalBytes - free : 0;
    tier.freeBytes = std::min(free, tier.capacityBytes > used ? tier.capacityBytes - used : 0);
  }
  return {};
}

}  // namespace mtm::config
