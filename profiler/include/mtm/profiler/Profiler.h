#pragma once
// The profiling loop: per target, regions fed by every available source; per interval, one
// snapshot, at a CPU cost the overhead controller holds to the budget.

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mtm/KernelFs.h"
#include "mtm/Log.h"
#include "mtm/Result.h"
#include "mtm/config/Config.h"
#include "mtm/config/TierMap.h"
#include "mtm/profiler/OverheadController.h"
#include "mtm/profiler/Regions.h"
#include "mtm/profiler/Snapshot.h"
#include "mtm/profiler/Source.h"

namespace mtm::profiler {

class Profiler {
 public:
  // Probes each source named in profiler.sources; those the machine lacks are logged with the
  // reason and skipped. An error only when none can run.
  static Result<std::unique_ptr<Profiler>> create(const config::Config& config, const config::TierMap* tiers = nullptr);

  // Starts profiling a process: every active source attaches (those that cannot are logged).
  // `pidfd` is the process's pidfd where the caller holds one; else the profiler opens its own.
  Status addTarget(int pid, SharedPidfd pidfd = nullptr);
  void removeTarget(int pid);
  // RegionSet::cutAt for a target's regions; false where it cut nothing.
  bool cutRegion(int pid, uint64_t addr);
  // RegionSet::noteNode for a target's regions: where a mover put [start, end).
  void noteMoved(int pid, uint64_t start, uint64_t end, int node);
  bool hasTarget(int pid) const { return targets_.count(pid) > 0; }
  size_t targetCount() const { return targets_.size(); }

  // Ends an interval: gathers observations, updates regions, corrects the budget. Targets that
  // exited are dropped and listed in the snapshot.
  Snapshot runInterval();
  // Prepares the next runInterval() for sources that look a while after they prepare (accessed
  // bits: cleared now, read then). Call it primeLead() before runInterval(); its CPU time counts
  // toward that interval. Without it those sources prepare a whole interval ahead.
  void prime();
  // How long before runInterval() to call prime(): profiler.abit_window_ms plus what the last
  // prime() took (it clears as it goes); zero when no active source primes or the window is 0.
  // A prime() that takes longer than the last makes the next runInterval() wait until the
  // window has passed since it finished: no check reads less than the window.
  std::chrono::milliseconds primeLead() const;

  const std::vector<std::string>& activeSources() const { return names_; }
  // How often /proc/PID/maps was read for a target (sources that follow the address space
  // spare the reads).
  uint64_t mapsReads(int pid) const;

 private:
  Profiler(const config::Config& config, const config::TierMap* tiers);
  struct Target {
    std::unique_ptr<RegionSet> regions;
    std::vector<Source*> sources;       // those that attached
    std::string maps;                   // /proc/PID/maps as last read
    std::optional<uint64_t> layoutGen;  // a source's address-space generation at that read
    uint64_t mapsReads = 0;
  };
  Status refreshLayout(int pid, Target& t);
  // A target's share of the interval's checks and CPU time: in proportion to its bytes.
  Grant shareOf(const Target& t, double totalBytes) const;

  config::Config config_;
  const config::TierMap* tiers_;
  KernelFs proc_{"/"};
  std::vector<std::unique_ptr<Source>> sources_;
  std::vector<std::string> names_;
  std::map<int, Target> targets_;
  OverheadController controller_;
  log::RateLimit warnLimit_{std::chrono::seconds(10)};  // a failing source warns once per 10 s
  uint64_t interval_ = 0;
  uint64_t startNs_ = 0;
  uint64_t primeCpuNs_ = 0;             // spent by prime() since the last interval
  uint64_t primeWallNs_ = 0;            // how long the last prime() took
  uint64_t primeEndNs_ = 0;             // when the last prime() finished (CLOCK_MONOTONIC), until read
  bool attachedSinceInterval_ = false;  // a target was added: the next interval pays its one-time work
};

}  // namespace mtm::profiler
