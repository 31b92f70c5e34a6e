#pragma once
// MTM's first principle: profiling overhead is tied to the number of checks, not of regions.
// The budget (a fraction of one core's time) becomes a number of page checks per interval; the
// profiler's measured CPU time corrects it every interval.

#include <cstdint>
#include <deque>
#include <optional>
#include <utility>

namespace mtm::profiler {

class OverheadController {
 public:
  OverheadController(double budgetFraction, uint32_t intervalMs, uint64_t minChecks = 16, uint64_t maxChecks = 1ull << 22);
  // Checks the next interval may spend.
  uint64_t checks() const { return checks_; }
  // What the last interval really spent: `checks` done for `cpuNs` of the profiler's CPU time.
  // `oneTimeWork`: the interval also did work that will not recur (attaching a process: its
  // layout, its first regions). Its cost still cuts the grant when over budget, but it tells
  // nothing about what checks cost, so the cost model neither learns from it nor is judged by it.
  void report(uint64_t checks, uint64_t cpuNs, bool oneTimeWork = false);
  uint64_t budgetNs() const { return budgetNs_; }
  // Whether a cost model (fixed + per check) steers the grant now; false while it is still
  // being learned, when growth under budget is at least kFitSpread a step.
  bool knowsCost() const { return model_.has_value(); }
  // Intervals the cost fit looks back on, and how far apart their checks must be (max / min).
  static constexpr size_t kFitWindow = 6;
  static constexpr double kFitSpread = 1.5;
  // How far from what the model predicts an interval's cost may be before the model is dropped
  // (and a fit's root mean square miss over its window before it is not taken).
  static constexpr double kModelTolerance = 0.25;

 private:
  struct CostModel {
    double fixedNs, perCheckNs;
    double costNs(double checks) const { return fixedNs + perCheckNs * checks; }
  };
  // A least-squares fit of cost = fixed + perCheck x checks over the recent intervals, when
  // their checks differ enough to tell the two apart, a check costs something and the fit
  // explains the intervals it was made from.
  std::optional<CostModel> fit() const;
  // Adds an interval to the fit's window, and refits or checks the model against it.
  void learn(double checks, double cpuNs);

  uint64_t budgetNs_;
  uint64_t minChecks_, maxChecks_;
  uint64_t checks_;
  std::deque<std::pair<double, double>> recent_;  // (checks, cost ns), newest last
  std::optional<CostModel> model_;                // the last fit, kept while it explains the costs seen
};

}  // namespace mtm::profiler
