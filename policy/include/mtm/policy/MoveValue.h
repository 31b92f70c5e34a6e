#pragma once
// Whether a move pays: its expected benefit over the policy's horizon against its cost, both in
// nanoseconds of time.
//
// Benefit: the accesses the moved pages will take over the horizon times the latency gap between
// the tiers. Accessed bits only say whether a page was touched within a window, so a page's access
// rate is estimated from its region's hotness p (the chance a check finds it accessed within one
// window w: profiler.abit_window_ms, or the interval when that is 0) as a Poisson rate,
// lambda = -ln(1 - p) / w: a lower bound, since a page touched a
// thousand times reads the same as one touched once. p is first weighed by confidence,
// c / (c + 1) with c the decayed checks behind it: a region seen twice does not outrank a
// settled one. Cost: the page's copy at migration.max_rate, the bandwidth the operator grants
// migration (not the mover's measured rate: under emulation that falls with everything else
// while the access-rate bound does not, and no move paid -- docs/architecture.md). Demotions
// that make room for a promotion count against it: their cost, and the accesses they slow down.
//
// Tier latency: HMAT read latency where every tier has it, else the SLIT distance from the CPUs
// at 10 ns a unit (local = 10 = 100 ns), else 100 ns doubled each tier down.

#include <cstdint>
#include <vector>

#include "mtm/config/Config.h"
#include "mtm/config/TierMap.h"
#include "mtm/profiler/Snapshot.h"

namespace mtm::policy {

// Read latency per tier in ns, fastest first.
std::vector<double> tierLatencyNs(const config::TierMap& tiers);

// Hotness weighed by confidence: what ranking and value use.
double effectiveHotness(const profiler::RegionInfo& r);

class MoveValue {
 public:
  MoveValue(const config::Config& config, const config::TierMap& tiers);

  // Nanoseconds the accesses to `bytes` of a region with effective hotness `hotness` spend more
  // (or less, negative) over the horizon in tier `to` than in tier `from`.
  double accessGainNs(double hotness, uint64_t bytes, size_t from, size_t to) const;
  // Nanoseconds the mover spends copying `bytes`.
  double copyCostNs(uint64_t bytes) const;

  double horizonS() const { return horizonS_; }
  size_t tierCount() const { return latencyNs_.size(); }

 private:
  std::vector<double> latencyNs_;
  double windowS_;  // how long a check looks: profiler.abit_window_ms, or the interval
  double horizonS_;
  double nsPerByte_;
};

}  // namespace mtm::policy
