#pragma once
// The calling thread's CPU time (user and system), in ns: what the profiler's budget counts.

#include <time.h>

#include <cstdint>

namespace mtm::profiler {

inline uint64_t threadCpuNs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

}  // namespace mtm::profiler
