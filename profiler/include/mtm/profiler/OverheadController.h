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
  void report(uint64_t checks, uint64_t cpuNs);
  uint64_t budgetNs() const { return budgetNs_; }
  // Intervals the cost fit looks back on, and how far apart their checks must be (max / min).
  static constexpr size_t kFitWindow = 6;
  static constexpr double kFitSpread = 1.5;

 private:
  // checks = (budget - fixed) / perCheck from a least-squares fit of cost = fixed + perCheck x
  // checks over the recent intervals, when their checks differ enough to tell the two apart.
  std::optional<double> fittedChecks() const;

  uint64_t budgetNs_;
  uint64_t minChecks_, maxChecks_;
  uint64_t checks_;
  std::deque<std::pair<double, double>> recent_;  // (checks, cost ns), newest last
};

}  // namespace mtm::profiler
