#pragma once
// The profiling loop: per target, regions fed by every available source; per interval, one
// snapshot, at a CPU cost the overhead controller holds to the budget.

#include <map>
#include <optional>
#include <memory>
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
  Status addTarget(int pid);
  void removeTarget(int pid);
  // RegionSet::cutAt for a target's regions; false where it cut nothing.
  bool cutRegion(int pid, uint64_t addr);
  bool hasTarget(int pid) const { return targets_.count(pid) > 0; }
  size_t targetCount() const { return targets_.size(); }

  // Ends an interval: gathers observations, updates regions, corrects the budget. Targets that
  // exited are dropped and listed in the snapshot.
  Snapshot runInterval();

  const std::vector<std::string>& activeSources() const { return names_; }
  // How often /proc/PID/maps was read for a target (sources that follow the address space
  // spare the reads).
  uint64_t mapsReads(int pid) const;

 private:
  Profiler(const config::Config& config, const config::TierMap* tiers);
  struct Target {
    std::unique_ptr<RegionSet> regions;
    std::vector<Source*> sources;  // those that attached
    std::string maps;              // /proc/PID/maps as last read
    std::optional<uint64_t> layoutGen;  // a source's address-space generation at that read
    uint64_t mapsReads = 0;
  };
  Status refreshLayout(int pid, Target& t);

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
};

}  // namespace mtm::profiler
