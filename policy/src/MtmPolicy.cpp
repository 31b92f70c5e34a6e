#include "mtm/policy/MtmPolicy.h"

#include <algorithm>
#include <cstdint>

#include "mtm/Registry.h"
#include "mtm/policy/Planner.h"

namespace mtm::policy {
namespace {

constexpr uint64_t kPage = kPageSize;
constexpr uint64_t kThp = kThpSize;

// The bytes of r that `runs` cover, the highest hotness and confidence among them, and whether
// all of them are ahead of their phase.
uint64_t covered(const profiler::RegionInfo& r, const std::vector<PhasePredictor::Prediction>& runs, double* hotness = nullptr,
                 double* confidence = nullptr, bool* ahead = nullptr) {
  uint64_t bytes = 0;
  // Sorted by address, ends in order too (PhasePredictor): the first that ends past r's start.
  auto first = std::lower_bound(runs.begin(), runs.end(), std::pair(r.pid, r.start),
                                [](const auto& p, const auto& key) { return std::pair(p.pid, p.end) <= key; });
  for (auto it = first; it != runs.end() && it->pid == r.pid && it->start < r.end; ++it) {
    const auto& p = *it;
    bytes += std::min(p.end, r.end) - std::max(p.start, r.start);
    if (hotness) *hotness = std::max(*hotness, p.hotness);
    if (confidence) *confidence = std::max(*confidence, p.confidence);
    if (ahead) *ahead = *ahead && p.ahead;
  }
  return bytes;
}

// Regions that predictions cover (all but an eighth of them) take the hotness and confidence
// their group showed when last hot, where that is more than their own; those covered only for
// phases not begun yet are marked predictedAhead. A region they cover in part is cut there, and
// the covered parts take it: the profiler merges cold memory that lies together, and a
// predicted group's memory, cold until its phase, may lie in one region with much else (in the
// VM lab, 64 MiB of a phase in one of 188 MiB was never moved ahead; lifted whole where half
// was covered, a 124 MiB region holding a 64 MiB group and most of another went up, and the
// current phase's set went down to make it room before its phase ended). Regions that cooling
// predictions cover by half rank as cold (at most `cold`): the room the predicted group needs
// may come from them (a watermark does not shed them: Planner). Regions that keeps cover by half
// are keptForNext: that room may not come from them. Returns the bytes so raised.
uint64_t applyPredictions(profiler::Snapshot& snap, const PhasePredictor& predictor, double cold) {
  uint64_t raised = 0;
  std::vector<profiler::RegionInfo> out;
  out.reserve(snap.regions.size());
  for (const auto& r : snap.regions) {
    const uint64_t half = (r.end - r.start + 1) / 2;
    double hotness = 0, confidence = 0;
    bool ahead = true;
    const uint64_t predicted = covered(r, predictor.predictions(), &hotness, &confidence, &ahead);
    if (predicted == 0 || hotness <= r.hotness) {
      out.push_back(r);
      if (predicted < half && covered(r, predictor.coolings()) >= half) {
        out.back().hotness = std::min(r.hotness, cold);
        out.back().coolingPredicted = true;
      } else if (predicted < half) {
        out.back().keptForNext = covered(r, predictor.keeps()) >= half;
      }
      continue;
    }
    auto lift = [&](profiler::RegionInfo part, bool partAhead) {
      part.hotness = hotness;
      part.confidence = std::max(part.confidence, confidence);
      part.predictedAhead = partAhead;
      raised += part.end - part.start;
      out.push_back(part);
    };
    if (predicted >= r.end - r.start - (r.end - r.start) / 8) {  // all but a sliver: whole
      lift(r, ahead);
      continue;
    }
    // The parts between the runs keep r's reading (not its THP skew: that was of all of r).
    auto pieceOf = [&](uint64_t start, uint64_t end) {
      profiler::RegionInfo part = r;
      part.start = start;
      part.end = end;
      part.skew = -1;
      part.hotEighths = 0;
      return part;
    };
    std::vector<PhasePredictor::Prediction> runs;
    for (const auto& p : predictor.predictions())
      if (p.pid == r.pid && p.end > r.start && p.start < r.end) runs.push_back(p);
    std::sort(runs.begin(), runs.end(), [](const auto& a, const auto& b) { return a.start < b.start; });
    uint64_t at = r.start;
    for (const auto& p : runs) {
      if (p.end <= at) continue;
      if (p.start > at) out.push_back(pieceOf(at, p.start));
      const uint64_t end = std::min(r.end, p.end);
      lift(pieceOf(std::max(at, p.start), end), p.ahead);
      at = end;
    }
    if (at < r.end) out.push_back(pieceOf(at, r.end));
  }
  snap.regions = std::move(out);
  return raised;
}

}  // namespace

MtmPolicy::MtmPolicy(const config::Config& config) : config_(config), memory_(intervalsIn(config.policy.pingPongWindowS, config)) {
  if (config.policy.predict.mode == "on") predictor_ = std::make_unique<PhasePredictor>(config);
}

void MtmPolicy::observe(const profiler::Snapshot& snap, const config::TierMap& tiers) {
  for (int pid : snap.exited) memory_.forget(pid);
  memory_.prune(snap.regions, snap.interval, kMemoryPerRegion * snap.regions.size() + kMemorySlack);
  creditStays(snap, tiers);
  if (!predictor_) return;
  if (!tiers.tiers.empty()) {
    const auto& top = tiers.tiers.front();
    predictor_->setTopFree(static_cast<uint64_t>(std::max<int64_t>(0, static_cast<int64_t>(top.freeBytes) - top.lowWatermarkBytes())));
  }
  predictor_->observe(snap);
}

Plan MtmPolicy::plan(const profiler::Snapshot& snap, const config::TierMap& tiers) {
  observe(snap, tiers);
  if (!predictor_) {
    Plan plan = Planner(config_, snap, tiers, memory_, splitThps_).run();
    planCollapses(snap, plan);
    return plan;
  }
  profiler::Snapshot raised = snap;
  const uint64_t raisedBytes = applyPredictions(raised, *predictor_, config_.policy.coldThreshold);
  Plan plan = Planner(config_, raised, tiers, memory_, splitThps_).run();
  planCollapses(snap, plan);
  const auto s = predictor_->stats();
  plan.prediction = {s.groups, s.activeGroups,   s.transitions,       s.predictions, s.hits,
                     s.misses, s.predictedBytes, s.mispredictedBytes, raisedBytes};
  return plan;
}

// What this interval's accesses earned the promoted memory that stayed where it went, and how
// much colder the demoted memory proved (the profiler's own hotness: not the predictor's).
void MtmPolicy::creditStays(const profiler::Snapshot& snap, const config::TierMap& tiers) {
  if (tiers.tiers.size() < 2) return;
  const MoveValue value(config_, tiers);
  const double intervalShare = double(config_.profiler.intervalMs) / 1000.0 / value.horizonS();
  const double cooldownShare = 1.0 / double(intervalsIn(config_.policy.cooldownS, config_));
  for (const auto& r : snap.regions) {
    if (r.tier < 0) continue;
    const double hotness = effectiveHotness(r);
    memory_.credit(r.pid, r.start, r.end, r.tier, hotness, intervalShare, value);
    memory_.creditCold(r.pid, r.start, r.end, r.tier, hotness <= config_.policy.coldThreshold, cooldownShare);
  }
}

Status MtmPolicy::hint(const Hint& hint) {
  if (!predictor_) return Error("hints feed predictive placement, which is off: set policy.predict.mode: on");
  return predictor_->hint(hint);
}

void MtmPolicy::moveRate(double bytesPerSecond) {
  if (predictor_) predictor_->setMoveRate(bytesPerSecond);
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
  // Bytes each of the two tiers can take and keep its low watermark free.
  int64_t spare[2];
  for (size_t t = 0; t < 2; ++t) spare[t] = static_cast<int64_t>(tiers.tiers[t].freeBytes) - tiers.tiers[t].lowWatermarkBytes();
  for (const auto& r : snap.regions) {
    const uint64_t pages = (r.end - r.start) / kPage;
    const auto bytes = static_cast<int64_t>(r.end - r.start);
    if (pages > budget) continue;
    const bool up = r.tier == 1 && r.hotness >= config_.policy.hotThreshold;
    const bool down = r.tier == 0 && r.hotness <= config_.policy.coldThreshold;
    if (!up && !down) continue;
    const size_t to = up ? 0 : 1;
    if (spare[to] < bytes) continue;
    plan.moves.push_back(requestToTier(r.pid, tiers.tiers[to], up ? MoveKind::Promotion : MoveKind::Demotion));
    plan.moves.back().ranges = {{r.start, r.end}};
    spare[to] -= bytes;
    spare[1 - to] += bytes;
    budget -= pages;
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
