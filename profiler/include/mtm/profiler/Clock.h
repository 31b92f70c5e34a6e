#pragma once
// Clock readings in ns. The calling thread's CPU time (user and system) is what the profiler's
// budget counts.

#include <time.h>

#include <cstdint>

namespace mtm::profiler {

inline uint64_t clockNs(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

inline uint64_t threadCpuNs() { return clockNs(CLOCK_THREAD_CPUTIME_ID); }

}  // namespace mtm::profiler
