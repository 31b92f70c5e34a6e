#pragma once
// The truth of mtm-test-hotset (which 2 MiB regions are hot in which phase) and how a
// profiler's hot ranges score against it: precision and recall per 2 MiB region.

#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "mtm/profiler/Snapshot.h"

namespace mtm::bench {

inline constexpr uint64_t kGranule = 2ull << 20;

struct HotPhase {
  double start = 0;  // CLOCK_MONOTONIC seconds
  std::set<uint64_t> hot;
};

struct HotSetTruth {
  uint64_t base = 0, granules = 0;
  std::vector<HotPhase> phases;
  // Reads phases the workload has announced since the last call.
  void update(const std::string& truthFile);
  // The phase in force at time t (nullptr before the first).
  const HotPhase* at(double t) const;
};

struct Score {
  double precision = 1, recall = 1;
};

// A 2 MiB region counts as predicted hot when `hotRanges` cover at least half of it.
Score score(const std::vector<std::pair<uint64_t, uint64_t>>& hotRanges, const HotSetTruth& truth, const HotPhase& phase);

// The ranges of a snapshot's regions whose hotness reaches `threshold`.
std::vector<std::pair<uint64_t, uint64_t>> hotRanges(const profiler::Snapshot& snapshot, double threshold);

// The 2 MiB regions a clairvoyant placement must move for the truth's phases: the top tier holds
// `capacity` regions and starts with none of the workload's; each phase's hot set goes up (as
// much of it as fits), and what must leave to make room goes down, chosen by Belady's rule (the
// region needed again latest first). Moves beyond this are churn.
struct OracleMoves {
  uint64_t up = 0, down = 0;
  uint64_t total() const { return up + down; }
};
OracleMoves oracleMoves(const std::vector<HotPhase>& phases, uint64_t capacity);

double monotonicSeconds();

}  // namespace mtm::bench
