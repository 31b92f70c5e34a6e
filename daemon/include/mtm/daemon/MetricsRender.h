#pragma once
// mtm's metrics in Prometheus's text exposition format (by prometheus-cpp): per tier (capacity,
// free, the kernel's reserve, moves in), per managed process (bytes per tier, hot bytes and hot
// bytes in the fastest tier, pages promoted, demoted and ping-ponged, failures by errno), the
// profiler (checks, CPU seconds, sources), the mover (pages in flight, rate), histograms of
// interval duration and plan size, the kernel's own tiering counters from /proc/vmstat, and
// build info. docs/daemon.md "Monitoring" lists them.

#include <functional>
#include <memory>
#include <string>

#include "mtm/KernelFs.h"
#include "mtm/daemon/Manager.h"

namespace prometheus {
class Registry;
class Histogram;
}  // namespace prometheus

namespace mtm::daemon {

class MetricsRecorder {
 public:
  MetricsRecorder();
  ~MetricsRecorder();
  MetricsRecorder(const MetricsRecorder&) = delete;
  MetricsRecorder& operator=(const MetricsRecorder&) = delete;

  // One interval took `seconds` (its profiling, plan and hand-off) and planned `report`'s pages.
  void observeInterval(double seconds, const IntervalReport& report);
  // Everything, as it is now: a copy of the manager's figures taken here (cheap), rendered by
  // the returned function on any thread (the expensive part: some 2,600 series at 200
  // targets), so the caller's loop does not wait for it. `fs`: where /proc/vmstat is read, then.
  std::function<std::string()> capture(const Manager& m, const KernelFs& fs) const;

 private:
  std::shared_ptr<prometheus::Registry> histograms_;  // across intervals
  prometheus::Histogram* intervalSeconds_ = nullptr;
  prometheus::Histogram* planPages_ = nullptr;
};

}  // namespace mtm::daemon
