#pragma once
// A source of page-access observations: hardware sampling, accessed bits, page faults, DAMON.

#include <cstdint>
#include <optional>
#include <string_view>

#include "mtm/Pidfd.h"
#include "mtm/Result.h"
#include "mtm/config/Config.h"
#include "mtm/profiler/Regions.h"

namespace mtm::profiler {

// What the overhead controller grants a source for one target and interval: page checks, for
// sources that choose which pages to look at, and the CPU time they are meant to take, which
// work that can stop early (clearing) keeps to.
struct Grant {
  uint64_t checks = 0;
  uint64_t cpuNs = 0;
};

class Source {
 public:
  static constexpr std::string_view kRole = "profiler source";
  struct Context {
    const config::Config& config;
  };
  virtual ~Source() = default;

  // Whether the source can run on this machine; the error says why not and what to do.
  virtual Status probe() = 0;
  // Starts or stops watching a process; `pidfd` is the process's own (shared with mtmd's other
  // users of it), null where none could be opened. attach() errors name the process and the reason.
  virtual Status attach(int pid, const SharedPidfd& pidfd) = 0;
  virtual void detach(int pid) = 0;
  // Adds the interval's observations of `pid` to its regions within `grant`; returns the
  // checks it spent.
  virtual Result<uint64_t> observe(int pid, RegionSet& regions, Grant grant) = 0;
  // Sources that look some time after they prepare (accessed bits: cleared, then read) prepare
  // the next observe() here, profiler.abit_window_ms before it, with the same grant. One that
  // is not primed prepares in observe() for the next, a whole interval ahead.
  virtual bool primes() const { return false; }
  virtual Status prime(int, RegionSet&, Grant) { return {}; }
  // Sources that follow the address space themselves: a number that changes whenever it does
  // (mmap, munmap, mprotect, brk), so /proc/PID/maps is read only then; nullopt otherwise.
  virtual std::optional<uint64_t> layoutGeneration(int) const { return std::nullopt; }
};

}  // namespace mtm::profiler
