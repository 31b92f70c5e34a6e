#pragma once
// What the profiler hands the policy each interval: regions of the targets' address spaces and
// how hot each one is. Policies see the system only through this.

#include <cstdint>
#include <vector>

namespace mtm::profiler {

struct RegionInfo {
  int pid = 0;
  uint64_t start = 0;  // page-aligned virtual addresses, [start, end)
  uint64_t end = 0;
  double hotness = 0;     // decayed fraction of checks that found it accessed, [0, 1]
  uint32_t age = 0;       // intervals since the region took its shape
  double confidence = 0;  // decayed number of checks behind the hotness
  int node = -1;          // NUMA node holding most of its checked pages (-1: unknown)
  int tier = -1;          // that node's tier (-1: unknown)
  bool huge = false;      // THP-backed
  // THP-backed, from samples with exact addresses (hw_sample, page_fault): how unevenly the
  // region's eighths are accessed, 0 (even) .. 0.875 (one eighth); -1 when too few samples say.
  double skew = -1;
  uint8_t hotEighths = 0;  // bit i: eighth i saw at least half the mean share of samples
  // Set by the policy's phase predictor, not the profiler. coolingPredicted: expected to cool
  // before the memory predicted next is needed, its hotness lowered to cold_threshold at most.
  // predictedAhead: its hotness raised for a phase that has not begun (Planner: it gives way to
  // memory seen hot). keptForNext: of a phase predicted to follow the one predicted next before
  // the phase under way comes again (Planner: it makes no room for memory predicted hot).
  bool coolingPredicted = false;
  bool predictedAhead = false;
  bool keptForNext = false;
};

struct Snapshot {
  uint64_t interval = 0;
  double seconds = 0;  // since profiling began
  std::vector<RegionInfo> regions;
  std::vector<int> exited;  // targets that went away this interval
  uint64_t checks = 0;      // page checks spent
  uint64_t cpuNs = 0;       // the profiler's own CPU time this interval
};

}  // namespace mtm::profiler
