#pragma once
// MTM's universal policy (principle 2): one global ranking of the regions of all tiers; hot
// regions in any lower tier go straight to the fastest tier with room; to make room, the coldest
// regions of a tier go one tier down. Free-memory watermarks, hysteresis and a per-region
// cooldown keep pages from ping-ponging; the plan fits the mover's page budget, hottest first.
// A THP is promoted whole when its subpages are about evenly hot; when samples show its access
// skewed (skew >= thp_split_skew) only its hot eighths move, the THP split around them, and once
// its parts sit on one node again and their hotness differs by at most thp_collapse_skew, it is
// collapsed back into a THP.

#include <map>
#include <set>
#include <utility>

#include "mtm/policy/Policy.h"

namespace mtm::policy {

class MtmPolicy final : public Policy {
 public:
  explicit MtmPolicy(const config::Config& config) : config_(config) {}
  Plan plan(const profiler::Snapshot& snapshot, const config::TierMap& tiers) override;

 private:
  const config::Config config_;
  struct LastMove {
    uint64_t interval = 0;
    migrate::MoveKind kind = migrate::MoveKind::Manual;
    int toTier = -1;
  };
  std::map<std::pair<int, uint64_t>, LastMove> lastMove_;  // (pid, start) -> its last planned move
  std::set<std::pair<int, uint64_t>> splitThps_;            // (pid, 2 MiB-aligned address) split here

  void planCollapses(const profiler::Snapshot& snapshot, Plan& plan);
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
