#include "mtm/profiler/OverheadController.h"

#include <algorithm>
#include <cmath>

namespace mtm::profiler {
namespace {
// A first guess of one check's cost (read, clear, bookkeeping), corrected after one interval.
constexpr double kFirstGuessNs = 10000;
}  // namespace

OverheadController::OverheadController(double budgetFraction, uint32_t intervalMs, uint64_t minChecks,
                                       uint64_t maxChecks)
    : budgetNs_(static_cast<uint64_t>(budgetFraction * intervalMs * 1e6)), minChecks_(minChecks),
      maxChecks_(maxChecks),
      checks_(std::clamp<uint64_t>(static_cast<uint64_t>(budgetNs_ / kFirstGuessNs), minChecks, maxChecks)) {}

void OverheadController::report(uint64_t checks, uint64_t cpuNs) {
  if (checks == 0 || cpuNs == 0) return;
  // Scale by how far the cost was from the budget: down at once when over it, up damped (the
  // cost has a fixed part, so growing by the full ratio would overshoot), at most 2x a step.
  // Under budget, grow from what was granted even where less was spent (sources cap checks at
  // what the regions hold): the grant is what the next interval may use.
  const double ratio = double(budgetNs_) / double(cpuNs);
  const double step = ratio < 1 ? std::max(0.25, ratio) : std::min(2.0, std::pow(ratio, 0.8));
  const uint64_t base = ratio < 1 ? checks : std::max(checks, checks_);
  checks_ = std::clamp<uint64_t>(static_cast<uint64_t>(double(base) * step), minChecks_, maxChecks_);
}

}  // namespace mtm::profiler
