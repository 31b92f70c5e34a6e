#pragma once
// Carries out move requests and says exactly what happened.

#include <functional>
#include <string_view>
#include <vector>

#include "mtm/KernelFs.h"
#include "mtm/MoveRequest.h"
#include "mtm/config/Config.h"
#include "mtm/migrate/Clock.h"
#include "mtm/migrate/HugePages.h"
#include "mtm/migrate/Syscalls.h"

namespace mtm::migrate {

struct MoverOptions {
  uint32_t batchPages = 1024;  // addresses per move_pages call
  uint32_t threads = 1;
  uint64_t maxRateBytes = 0;  // bytes per second; 0 = unlimited
  uint64_t maxPages = 0;      // 4 KiB pages per execute(); 0 = unlimited
  uint32_t retries = 3;       // extra passes over pages that failed for a temporary reason
  bool dryRun = false;
  Clock::Duration burst = std::chrono::milliseconds(100);  // how far ahead of the rate a batch may run

  static MoverOptions fromConfig(const config::MigrationConfig& config);
};

struct Progress {
  uint64_t pagesDone = 0;  // moved, failed or skipped so far
  uint64_t pagesTotal = 0;
  uint64_t pagesMoved = 0;
  Clock::Duration elapsed{0};
};

// What a mover acts through: all side effects and all kernel reads.
struct MoverDeps {
  MemorySyscalls& sys;
  HugePageFinder& huge;
  const KernelFs& fs;  // for /proc/PID/smaps
  Clock& clock;
};

class Mover {
 public:
  static constexpr std::string_view kRole = "mover";
  struct Context {
    MoverDeps deps;
    MoverOptions options;
    // Asked before each batch: true stops that process's request, its pages not yet moved
    // counted as cancelled (it was detached or exited, or mtmd stops). Empty: never.
    std::function<bool(int pid)> cancelled = {};
  };
  using ProgressFn = std::function<void(const Progress&)>;

  virtual ~Mover() = default;
  // Runs the requests, promotions first. Never throws; every page is accounted for in the stats.
  virtual MoveStats execute(const std::vector<MoveRequest>& requests, const ProgressFn& progress = {}) = 0;
};

}  // namespace mtm::migrate
