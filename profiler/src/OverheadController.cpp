#include "mtm/profiler/OverheadController.h"

#include <algorithm>
#include <cmath>

namespace mtm::profiler {
namespace {
// A first guess of one check's cost (read, clear, bookkeeping), corrected after one interval.
constexpr double kFirstGuessNs = 10000;
}  // namespace

OverheadController::OverheadController(double budgetFraction, uint32_t intervalMs, uint64_t minChecks, uint64_t maxChecks)
    : budgetNs_(static_cast<uint64_t>(budgetFraction * intervalMs * 1e6)),
      minChecks_(minChecks),
      maxChecks_(maxChecks),
      checks_(std::clamp<uint64_t>(static_cast<uint64_t>(budgetNs_ / kFirstGuessNs), minChecks, maxChecks)) {}

void OverheadController::report(uint64_t checks, uint64_t cpuNs) {
  if (checks == 0 || cpuNs == 0) return;
  recent_.emplace_back(double(checks), double(cpuNs));
  if (recent_.size() > kFitWindow) recent_.pop_front();
  // Scale by how far the cost was from the budget: down at once when over it, up damped (the
  // cost has a fixed part, so growing by the full ratio would overshoot), at most 2x a step.
  // Under budget, grow from what was granted even where less was spent (sources cap checks at
  // what the regions hold): the grant is what the next interval may use. Where the fitted cost
  // says checks are cheaper than the ratio does -- a cost mostly fixed, like clearing a whole
  // THP-backed range each interval -- grow faster, still at most 2x.
  const double ratio = double(budgetNs_) / double(cpuNs);
  double step = ratio < 1 ? std::max(0.25, ratio) : std::min(2.0, std::pow(ratio, 0.8));
  const uint64_t base = ratio < 1 ? checks : std::max(checks, checks_);
  if (ratio >= 1)
    if (auto fitted = fittedChecks()) step = std::clamp(*fitted / double(base), step, 2.0);
  checks_ = std::clamp<uint64_t>(static_cast<uint64_t>(double(base) * step), minChecks_, maxChecks_);
}

std::optional<double> OverheadController::fittedChecks() const {
  if (recent_.size() < 3) return std::nullopt;
  double lo = recent_.front().first, hi = lo;
  double sx = 0, sy = 0;
  for (const auto& [x, y] : recent_) {
    lo = std::min(lo, x);
    hi = std::max(hi, x);
    sx += x;
    sy += y;
  }
  if (hi < kFitSpread * lo) return std::nullopt;
  const double n = double(recent_.size()), mx = sx / n, my = sy / n;
  double sxy = 0, sxx = 0;
  for (const auto& [x, y] : recent_) {
    sxy += (x - mx) * (y - my);
    sxx += (x - mx) * (x - mx);
  }
  const double perCheck = sxy / sxx, fixed = my - perCheck * mx;
  if (perCheck <= 0 || fixed >= double(budgetNs_)) return std::nullopt;
  return (double(budgetNs_) - std::max(0.0, fixed)) / perCheck;
}

}  // namespace mtm::profiler
