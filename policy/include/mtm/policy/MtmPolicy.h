#pragma once
// MTM's universal policy (principle 2): one global ranking of the regions of all tiers; hot
// regions in any lower tier go straight to the fastest tier with room; to make room, the coldest
// regions of a tier go one tier down. A move happens only when it pays (MoveValue.h), a promotion
// and the demotions that make its room together (Planner.h). Free-memory watermarks,
// hysteresis, a cooldown and a bar raised by ping-pong (MoveMemory.h) keep pages from moving
// back and forth; the plan fits the mover's page budget, hottest first.
// A THP is promoted whole when its subpages are about evenly hot; when samples show its access
// skewed (skew >= thp_split_skew) only its hot eighths move, the THP split around them, and once
// its parts sit on one node again and their hotness differs by at most thp_collapse_skew, it is
// collapsed back into a THP.
// With policy.predict on, regions a learned phase is about to make hot are ranked as hot now
// (PhasePredictor.h): the same planner, rules and budget move them ahead of need.

#include <memory>
#include <set>
#include <utility>

#include "mtm/policy/MoveMemory.h"
#include "mtm/policy/PhasePredictor.h"
#include "mtm/policy/Policy.h"

namespace mtm::policy {

class MtmPolicy final : public Policy {
 public:
  explicit MtmPolicy(const config::Config& config);
  Plan plan(const profiler::Snapshot& snapshot, const config::TierMap& tiers) override;
  // Exits, what moved memory earned where it went, and the predictor's phases.
  void observe(const profiler::Snapshot& snapshot, const config::TierMap& tiers) override;
  Status hint(const Hint& hint) override;
  void moveRate(double bytesPerSecond) override;
  const MoveMemory& memory() const { return memory_; }

  // Move records kept: at most this many per live region, plus a little.
  static constexpr size_t kMemoryPerRegion = 2;
  static constexpr size_t kMemorySlack = 1024;

 private:
  const config::Config config_;
  MoveMemory memory_;
  std::set<std::pair<int, uint64_t>> splitThps_;  // (pid, 2 MiB-aligned address) split here
  std::unique_ptr<PhasePredictor> predictor_;     // policy.predict.mode on

  void planCollapses(const profiler::Snapshot& snapshot, Plan& plan);
  void creditStays(const profiler::Snapshot& snapshot, const config::TierMap& tiers);
};

// The "two_tier" baseline: hot regions below the top tier move up, cold ones in it move to the
// next tier, thresholds only (like the kernel's own two-tier promotion and demotion).
class TwoTierPolicy final : public Policy {
 public:
  explicit TwoTierPolicy(const config::Config& config) : config_(config) {}
  Plan plan(const profiler::Snapshot& snapshot, const config::TierMap& tiers) override;

 private:
  const config::Config config_;
};

}  // namespace mtm::policy
