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

void OverheadController::report(uint64_t checks, uint64_t cpuNs, bool oneTimeWork) {
  if (checks == 0 || cpuNs == 0) return;
  if (!oneTimeWork) learn(double(checks), double(cpuNs));
  // Scale by how far the cost was from the budget: down at once when over it, up damped (noise
  // would otherwise overshoot), at most 2x a step. Under budget, grow from what was granted even
  // where less was spent (sources cap checks at what the regions hold): the grant is what the
  // next interval may use. Where the model says checks are cheaper than the ratio does -- a
  // cost mostly fixed, like clearing a whole THP-backed range each interval, or a system call's
  // own cost under emulation -- grow as far as it says, at most 2x. Without a model, grow at
  // least kFitSpread a step: the spread the fit needs, and a cost mostly fixed grows geometrically
  // instead of by its ratio's few percent (a probe that finds checks dear costs one interval
  // at most kFitSpread over the budget, and leaves the spread the fit needs to stop it).
  const double ratio = double(budgetNs_) / double(cpuNs);
  double step = ratio < 1 ? std::max(0.25, ratio) : std::min(2.0, std::pow(ratio, 0.8));
  const uint64_t base = ratio < 1 ? checks : std::max(checks, checks_);
  if (ratio >= 1) {
    if (model_ && model_->fixedNs < double(budgetNs_))
      step = std::clamp((double(budgetNs_) - std::max(0.0, model_->fixedNs)) / model_->perCheckNs / double(base), step, 2.0);
    else if (!model_)
      step = std::max(step, kFitSpread);
  }
  checks_ = std::clamp<uint64_t>(static_cast<uint64_t>(double(base) * step), minChecks_, maxChecks_);
}

void OverheadController::learn(double checks, double cpuNs) {
  recent_.emplace_back(checks, cpuNs);
  if (recent_.size() > kFitWindow) recent_.pop_front();
  // The model outlives the spread of checks it was fitted on (steady grants have none), for as
  // long as it explains what the intervals cost.
  if (auto fitted = fit())
    model_ = fitted;
  else if (model_ && std::abs(model_->costNs(checks) - cpuNs) > kModelTolerance * cpuNs)
    model_.reset();
}

std::optional<OverheadController::CostModel> OverheadController::fit() const {
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
  const CostModel model{my - sxy / sxx * mx, sxy / sxx};
  if (model.perCheckNs <= 0) return std::nullopt;
  // A fit that misses its own intervals by more than the tolerance (root mean square) was bent
  // by a few of them -- a move's aftermath, a layout change, code run for the first time under
  // emulation -- and would say checks cost what those did.
  double missed = 0;
  for (const auto& [x, y] : recent_) missed += std::pow((model.costNs(x) - y) / y, 2);
  if (std::sqrt(missed / n) > kModelTolerance) return std::nullopt;
  return model;
}

}  // namespace mtm::profiler
