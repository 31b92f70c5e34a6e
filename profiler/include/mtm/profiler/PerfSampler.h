#pragma once
// Sampling through perf_event_open(2) ring buffers, one event per thread of each target
// (threads that appear later are picked up each interval). The sample period adapts so that an
// interval yields about the number of samples asked for.

#include <linux/perf_event.h>

#include <map>
#include <memory>
#include <set>

#include "mtm/KernelFs.h"
#include "mtm/UniqueFd.h"
#include "mtm/profiler/PerfRecords.h"
#include "mtm/profiler/Regions.h"

namespace mtm::profiler {

// One perf event with its mmapped ring.
class PerfEvent {
 public:
  static Result<std::unique_ptr<PerfEvent>> open(perf_event_attr attr, int tid, unsigned ringPages = 64);
  ~PerfEvent();
  PerfEvent(const PerfEvent&) = delete;
  PerfEvent& operator=(const PerfEvent&) = delete;
  RingStats drain(const std::function<void(const Sample&)>& onSample, uint64_t maxSamples = UINT64_MAX) {
    return reader_->drain(onSample, maxSamples);
  }
  Status setPeriod(uint64_t period);

 private:
  PerfEvent() = default;
  UniqueFd fd_;
  void* map_ = nullptr;
  size_t mapBytes_ = 0;
  std::unique_ptr<RingReader> reader_;
};

class PerfSampler {
 public:
  explicit PerfSampler(perf_event_attr attr, uint64_t minPeriod) : attr_(attr), minPeriod_(minPeriod) {}
  Status attach(int pid);
  void detach(int pid);
  // Drains every thread's ring into `regions`, at most kReadFactor x `wantSamples` samples in
  // all (the rest dropped: the interval's cost stays bounded by the budget however many the
  // kernel wrote); then steers the period towards `wantSamples`. `kind`: what the samples are
  // to the regions (Mapping::exact for access samples, Mapping::fault for page faults).
  Result<RingStats> observe(int pid, RegionSet& regions, uint64_t wantSamples, Mapping kind);
  static constexpr uint64_t kReadFactor = 4;

 private:
  struct Target {
    std::map<int, std::unique_ptr<PerfEvent>> threads;
    std::set<int> refused;  // threads whose event could not be opened (exited)
    uint64_t period;
    uint64_t firstRing = 0;  // turns: the thread whose ring is read first this interval
  };
  Status openThreads(int pid, Target& t);
  perf_event_attr attr_;
  uint64_t minPeriod_;
  KernelFs proc_{"/"};
  std::map<int, Target> targets_;
};

}  // namespace mtm::profiler
