#pragma once
// MTM's first principle: profiling overhead is tied to the number of checks, not of regions.
// The budget (a fraction of one core's time) becomes a number of page checks per interval; the
// profiler's measured CPU time corrects it every interval.

#include <cstdint>

namespace mtm::profiler {

class OverheadController {
 public:
  OverheadController(double budgetFraction, uint32_t intervalMs, uint64_t minChecks = 16,
                     uint64_t maxChecks = 1ull << 22);
  // Checks the next interval may spend.
  uint64_t checks() const { return checks_; }
  // What the last interval really spent: `checks` done for `cpuNs` of the profiler's CPU time.
  void report(uint64_t checks, uint64_t cpuNs);
  uint64_t budgetNs() const { return budgetNs_; }

 private:
  uint64_t budgetNs_;
  uint64_t minChecks_, maxChecks_;
  uint64_t checks_;
};

}  // namespace mtm::profiler
