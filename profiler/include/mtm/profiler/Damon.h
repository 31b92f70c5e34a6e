#pragma once
// DAMON virtual-address monitoring driven through its sysfs (Linux 5.18+, CONFIG_DAMON_SYSFS and
// CONFIG_DAMON_VADDR). mtm only ever starts a monitor of its own where none runs: a machine
// whose DAMON is already in use (kdamonds exist) is left untouched.

#include <cstdint>
#include <string>
#include <vector>

#include "mtm/KernelFs.h"
#include "mtm/Result.h"

namespace mtm::profiler {

struct DamonRegion {
  uint64_t start = 0, end = 0;
  uint32_t nrAccesses = 0;  // samples (of aggregation / sample) that saw it accessed
  uint32_t age = 0;
};

struct DamonAttrs {
  uint64_t sampleUs = 5000;
  uint64_t aggrUs = 100000;
  uint64_t updateUs = 1000000;
  uint64_t minRegions = 10, maxRegions = 1000;
};

class DamonMonitor {
 public:
  // Checks that DAMON sysfs exists and is unused; errors say why not.
  static Status available(const std::string& root = "/sys/kernel/mm/damon/admin");
  // Starts a kdamond monitoring `pid`'s virtual addresses.
  static Result<std::unique_ptr<DamonMonitor>> start(int pid, const DamonAttrs& attrs,
                                                     const std::string& root = "/sys/kernel/mm/damon/admin");
  ~DamonMonitor();  // stops the kdamond and removes it
  DamonMonitor(const DamonMonitor&) = delete;
  DamonMonitor& operator=(const DamonMonitor&) = delete;

  // The regions as of the last aggregation.
  Result<std::vector<DamonRegion>> regions();
  // The kdamond thread's CPU time so far, in nanoseconds (from /proc/PID/stat).
  uint64_t cpuNs() const;
  // Samples per aggregation: nrAccesses ranges over [0, this].
  uint32_t maxAccesses() const { return static_cast<uint32_t>(attrs_.aggrUs / attrs_.sampleUs); }

 private:
  DamonMonitor(std::string root, DamonAttrs attrs) : root_(std::move(root)), attrs_(attrs) {}
  Status write(const std::string& path, const std::string& value) const;
  std::string root_;
  DamonAttrs attrs_;
  int kdamondPid_ = -1;
  bool running_ = false;
};

}  // namespace mtm::profiler
