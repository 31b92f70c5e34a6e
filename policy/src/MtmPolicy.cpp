#include "mtm/policy/MtmPolicy.h"

#include <algorithm>
#include <cstdint>
#include <numeric>

#include "mtm/Registry.h"

namespace mtm::policy {
namespace {

constexpr uint64_t kPage = 4096;
constexpr uint64_t kThp = 2ull << 20;

// A skewed THP region's hot part: its hot eighths, adjacent ones joined.
std::vector<migrate::AddressRange> hotParts(const profiler::RegionInfo& r) {
  std::vector<migrate::AddressRange> out;
  const uint64_t eighth = (r.end - r.start) / 8;
  for (uint64_t i = 0; i < 8; ++i) {
    if ((r.hotEighths >> i & 1) == 0) continue;
    const uint64_t lo = r.start + i * eighth, hi = i == 7 ? r.end : lo + eighth;
    if (!out.empty() && out.back().end == lo) out.back().end = hi;
    else out.push_back({lo, hi});
  }
  return out;
}

uint64_t bytesOf(const std::vector<migrate::AddressRange>& ranges) {
  uint64_t n = 0;
  for (const auto& r : ranges) n += r.end - r.start;
  return n;
}

// Free bytes per tier as the plan takes shape.
class Room {
 public:
  explicit Room(const config::TierMap& tiers) : tiers_(tiers) {
    for (const auto& t : tiers.tiers) free_.push_back(static_cast<int64_t>(t.freeBytes));
  }
  // Bytes a tier can take and keep its low watermark free.
  int64_t spare(size_t tier) const {
    const auto& t = tiers_.tiers[tier];
    return free_[tier] - static_cast<int64_t>(t.lowWatermark * double(t.capacityBytes));
  }
  // Bytes a tier must shed to get back to its high watermark (0 when it has enough free).
  int64_t excess(size_t tier) const {
    const auto& t = tiers_.tiers[tier];
    return std::max<int64_t>(0, static_cast<int64_t>(t.highWatermark * double(t.capacityBytes)) - free_[tier]);
  }
  void move(size_t from, size_t to, uint64_t bytes) {
    free_[from] += static_cast<int64_t>(bytes);
    free_[to] -= static_cast<int64_t>(bytes);
  }

 private:
  const config::TierMap& tiers_;
  std::vector<int64_t> free_;
};

// The node of a tier to send pages to (most free first), and the rest of the tier as fallbacks.
migrate::MoveRequest request(const profiler::RegionInfo& r, const config::Tier& to, migrate::MoveKind kind) {
  migrate::MoveRequest m;
  m.pid = r.pid;
  m.ranges = {{r.start, r.end}};
  m.toNode = to.nodes.front();
  m.fallbackNodes.assign(to.nodes.begin() + 1, to.nodes.end());
  m.kind = kind;
  return m;
}

// The same, and when the kernel finds the whole tier full (ENOMEM: the free memory the plan
// was made with has gone, or the region's pages were not all where the profiler saw them), the
// tiers after it toward the region's own, in order: still the fastest tier with room for a
// promotion, the next lower one with room for a demotion.
migrate::MoveRequest requestWithTierFallback(const profiler::RegionInfo& r, const config::TierMap& tiers, size_t to,
                                             migrate::MoveKind kind) {
  migrate::MoveRequest m = request(r, tiers.tiers[to], kind);
  const size_t from = static_cast<size_t>(r.tier);
  if (kind == migrate::MoveKind::Promotion)
    for (size_t t = to + 1; t < from; ++t) m.fallbackNodes.insert(m.fallbackNodes.end(), tiers.tiers[t].nodes.begin(), tiers.tiers[t].nodes.end());
  else
    for (size_t t = to + 1; t < tiers.tiers.size(); ++t)
      m.fallbackNodes.insert(m.fallbackNodes.end(), tiers.tiers[t].nodes.begin(), tiers.tiers[t].nodes.end());
  return m;
}

}  // namespace

Plan MtmPolicy::plan(const profiler::Snapshot& snap, const config::TierMap& tiers) {
  Plan plan;
  if (tiers.tiers.size() < 2) return plan;
  const auto& pc = config_.policy;
  const uint64_t cooldown = std::max<uint64_t>(1, uint64_t{pc.cooldownS} * 1000 / std::max<uint32_t>(1, config_.profiler.intervalMs));
  // Within the cooldown a region stays put -- unless its last move arrived and it now goes on
  // in the same direction (tier 3 -> 1 while tier 0 was full, then 1 -> 0): that is no ping-pong.
  auto cooling = [&](const profiler::RegionInfo& r, migrate::MoveKind kind) {
    auto it = lastMove_.find({r.pid, r.start});
    if (it == lastMove_.end() || snap.interval >= it->second.interval + cooldown) return false;
    return !(it->second.kind == kind && r.tier == it->second.toTier);
  };
  uint64_t budget = config_.migration.maxPagesPerInterval;
  Room room(tiers);

  // One global ranking, hottest first.
  std::vector<size_t> order(snap.regions.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return snap.regions[a].hotness > snap.regions[b].hotness; });
  std::vector<bool> planned(snap.regions.size(), false);

  // A skewed THP region promotes only its hot part (the rest stays, split off).
  auto splits = [&](const profiler::RegionInfo& r, migrate::MoveKind kind) {
    return kind == migrate::MoveKind::Promotion && r.huge && r.skew >= pc.thpSplitSkew && r.hotEighths != 0;
  };
  auto movedBytes = [&](const profiler::RegionInfo& r, migrate::MoveKind kind) {
    return splits(r, kind) ? bytesOf(hotParts(r)) : r.end - r.start;
  };
  // Moves region i, or only its part [start, end) when given, from tier `from` to tier `to`.
  auto take = [&](size_t i, size_t from, size_t to, migrate::MoveKind kind, uint64_t start = 0, uint64_t end = 0) {
    const auto& r = snap.regions[i];
    const bool part = end != 0;
    const uint64_t bytes = part ? end - start : movedBytes(r, kind);
    if (bytes / kPage > budget) return false;
    budget -= bytes / kPage;
    room.move(from, to, bytes);
    plan.moves.push_back(requestWithTierFallback(r, tiers, to, kind));
    if (part) plan.moves.back().ranges = {{start, end}};
    if (!part && splits(r, kind)) {
      plan.moves.back().ranges = hotParts(r);
      plan.moves.back().splitPartialThps = true;
      for (uint64_t a = r.start & ~(kThp - 1); a < r.end; a += kThp) splitThps_.insert({r.pid, a});
    }
    // A region placed in parts is remembered by its first (fastest) part's tier.
    if (!planned[i]) lastMove_[{r.pid, r.start}] = {snap.interval, kind, static_cast<int>(to)};
    planned[i] = true;
    return true;
  };
  // The movable regions of `tier` at or below hotness `limit`, coldest first, and their bytes.
  auto coldestOf = [&](size_t tier, double limit, uint64_t& bytes) {
    std::vector<size_t> out;
    bytes = 0;
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      const auto& r = snap.regions[*it];
      if (static_cast<size_t>(r.tier) == tier && !planned[*it] && r.hotness <= limit &&
          !cooling(r, migrate::MoveKind::Demotion)) {
        out.push_back(*it);
        bytes += r.end - r.start;
      }
    }
    return out;
  };
  // Slow demotion: push regions of `tier` at or below hotness `limit`, coldest first, one tier
  // down (to the next tier with room) until `bytes` are freed; returns what was freed. With
  // `wholeOrNothing` nothing moves when the candidates cannot free that much (making room for a
  // promotion: a partial eviction would not make it).
  auto demote = [&](size_t tier, int64_t bytes, double limit, bool wholeOrNothing) {
    int64_t freed = 0;
    uint64_t available = 0;
    const auto candidates = coldestOf(tier, limit, available);
    if (wholeOrNothing && static_cast<int64_t>(available) < bytes) return freed;
    for (size_t i : candidates) {
      if (freed >= bytes) break;
      const uint64_t size = snap.regions[i].end - snap.regions[i].start;
      for (size_t down = tier + 1; down < tiers.tiers.size(); ++down) {
        if (room.spare(down) >= static_cast<int64_t>(size)) {
          if (take(i, tier, down, migrate::MoveKind::Demotion)) freed += static_cast<int64_t>(size);
          break;
        }
      }
    }
    return freed;
  };

  // Fast promotion: hot regions in lower tiers, hottest first, straight to the fastest tier
  // with room -- making room there, if needed, by demoting its coldest regions: cold ones, or
  // any that the global ranking puts at least promote_margin below the region coming in. A
  // region too big for the room a tier has or can make, when that room is at least half of it,
  // fills the room with its first whole 2 MiB granules and the rest goes on to the next tier: a
  // coarse region (few checks so far, its hot part not yet split off) is not held out of the
  // top tier by its size.
  for (size_t i : order) {
    const auto& r = snap.regions[i];
    if (r.hotness < pc.hotThreshold + pc.promoteMargin) break;
    if (r.tier <= 0 || planned[i] || cooling(r, migrate::MoveKind::Promotion)) continue;
    const size_t from = static_cast<size_t>(r.tier);
    const bool whole = splits(r, migrate::MoveKind::Promotion);  // a THP's hot part: never cut
    uint64_t start = r.start;
    for (size_t to = 0; to < from; ++to) {
      const auto size = static_cast<int64_t>(start == r.start ? movedBytes(r, migrate::MoveKind::Promotion) : r.end - start);
      if (room.spare(to) < size)
        demote(to, size - room.spare(to), std::max(pc.coldThreshold, r.hotness - pc.promoteMargin), true);
      if (room.spare(to) >= size) {
        if (start == r.start) take(i, from, to, migrate::MoveKind::Promotion);
        else take(i, from, to, migrate::MoveKind::Promotion, start, r.end);
        break;
      }
      // At least half of what is left, so that a region merely larger than a tier's spare
      // memory at the moment still moves whole (to the next tier, then up once room is made).
      if (whole || 2 * room.spare(to) < size) continue;
      const uint64_t cut = (start + static_cast<uint64_t>(room.spare(to))) & ~(kThp - 1);
      if (cut > start && take(i, from, to, migrate::MoveKind::Promotion, start, cut)) {
        plan.cuts.push_back({r.pid, cut});
        start = cut;
      }
    }
  }
  // Watermarks: a tier short of free memory sheds its coldest regions one tier down.
  for (size_t t = 0; t + 1 < tiers.tiers.size(); ++t)
    if (room.excess(t) > 0) demote(t, room.excess(t), pc.coldThreshold, false);
  planCollapses(snap, plan);
  return plan;
}

// A THP split here is collapsed again once the regions over it are 4 KiB-mapped and agree: one
// node, and hotness within thp_collapse_skew of each other -- its access has evened out. One whose process is
// gone, or that no region covers any more, is forgotten.
void MtmPolicy::planCollapses(const profiler::Snapshot& snap, Plan& plan) {
  for (int pid : snap.exited) splitThps_.erase(splitThps_.lower_bound({pid, 0}), splitThps_.upper_bound({pid, UINT64_MAX}));
  if (splitThps_.empty()) return;
  // The regions by (pid, address), so each split THP finds the few over it by binary search.
  std::vector<const profiler::RegionInfo*> byAddress;
  byAddress.reserve(snap.regions.size());
  for (const auto& r : snap.regions) byAddress.push_back(&r);
  std::sort(byAddress.begin(), byAddress.end(),
            [](const auto* a, const auto* b) { return std::pair(a->pid, a->start) < std::pair(b->pid, b->start); });
  for (auto it = splitThps_.begin(); it != splitThps_.end();) {
    const auto [pid, start] = *it;
    const uint64_t end = start + kThp;
    uint64_t covered = 0;
    int node = -2;
    double lo = 1, hi = 0;
    bool settled = true;
    // Regions of one process do not overlap: the first over the THP is the first ending past it.
    auto first = std::lower_bound(byAddress.begin(), byAddress.end(), std::pair(pid, start),
                                  [](const auto* r, const auto& key) { return std::pair(r->pid, r->end) <= key; });
    for (auto at = first; at != byAddress.end() && (*at)->pid == pid && (*at)->start < end; ++at) {
      const auto& r = **at;
      covered += std::min(r.end, end) - std::max(r.start, start);
      // Still a THP (the split has not happened, or failed): nothing to collapse yet.
      settled = settled && !r.huge && r.confidence >= 1 && r.node >= 0 && (node == -2 || r.node == node);
      node = r.node;
      lo = std::min(lo, r.hotness);
      hi = std::max(hi, r.hotness);
    }
    if (covered == 0) {
      it = splitThps_.erase(it);
      continue;
    }
    if (covered == kThp && settled && hi - lo <= config_.policy.thpCollapseSkew) {
      if (plan.collapses.empty() || plan.collapses.back().pid != pid) plan.collapses.push_back({pid, {}});
      plan.collapses.back().ranges.push_back({start, end});
      it = splitThps_.erase(it);
      continue;
    }
    ++it;
  }
}

Plan TwoTierPolicy::plan(const profiler::Snapshot& snap, const config::TierMap& tiers) {
  Plan plan;
  if (tiers.tiers.size() < 2) return plan;
  uint64_t budget = config_.migration.maxPagesPerInterval;
  Room room(tiers);
  for (const auto& r : snap.regions) {
    const uint64_t pages = (r.end - r.start) / kPage;
    if (pages > budget) continue;
    if (r.tier == 1 && r.hotness >= config_.policy.hotThreshold && room.spare(0) >= int64_t(r.end - r.start)) {
      plan.moves.push_back(request(r, tiers.tiers[0], migrate::MoveKind::Promotion));
      room.move(1, 0, r.end - r.start);
      budget -= pages;
    } else if (r.tier == 0 && r.hotness <= config_.policy.coldThreshold && room.spare(1) >= int64_t(r.end - r.start)) {
      plan.moves.push_back(request(r, tiers.tiers[1], migrate::MoveKind::Demotion));
      room.move(0, 1, r.end - r.start);
      budget -= pages;
    }
  }
  return plan;
}

namespace {
const bool kMtm = Registry<Policy>::add("mtm", "MTM: global ranking, hot straight to the fastest tier with room, cold one tier down",
                                        [](const Policy::Context& c) { return std::make_unique<MtmPolicy>(c.config); });
const bool kTwoTier = Registry<Policy>::add("two_tier", "hot/cold thresholds between the top tier and the next (baseline)",
                                            [](const Policy::Context& c) { return std::make_unique<TwoTierPolicy>(c.config); });
}  // namespace

}  // namespace mtm::policy
