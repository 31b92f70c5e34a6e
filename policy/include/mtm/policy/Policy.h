#pragma once
// A placement policy: from one interval's snapshot and the tier map, a plan of moves.
// Policies never touch /proc, /sys or perf; they only read what they are given.

#include <cstdint>
#include <string_view>
#include <vector>

#include "mtm/MoveRequest.h"
#include "mtm/Result.h"
#include "mtm/config/Config.h"
#include "mtm/config/TierMap.h"
#include "mtm/profiler/Snapshot.h"

namespace mtm::policy {

// THPs to form again (MADV_COLLAPSE) in a process: ones the policy split whose parts now sit on
// one node and are about as hot.
struct CollapseRequest {
  int pid = 0;
  std::vector<AddressRange> ranges;
};

// Where a move took only part of a region: the profiler cuts the region there, so that the
// part left behind is ranked and moved on its own.
struct RegionCut {
  int pid = 0;
  uint64_t addr = 0;
};

// A planned move that sends memory back the way it came within policy.pingpong_window_s.
struct PingPong {
  int pid = 0;
  uint64_t pages = 0;
};

// What predictive placement (policy.predict) knows and did so far; all zero when it is off.
struct PredictionReport {
  uint64_t groups = 0;          // groups of memory that turn hot together, over all targets
  uint64_t activeGroups = 0;    // of them, hot now: the current phases
  uint64_t transitions = 0;     // learned "this group follows that one" links
  uint64_t predictions = 0;     // groups promoted ahead of their expected start
  uint64_t hits = 0;            // ... that turned hot in time
  uint64_t misses = 0;          // ... that did not
  uint64_t predictedBytes = 0;  // memory predicted hot, summed over predictions
  uint64_t mispredictedBytes = 0;
  uint64_t boostedBytes = 0;  // this interval: regions ranked as hot on a prediction
};

struct Plan {
  std::vector<MoveRequest> moves;          // the mover runs demotions first, to make room
  std::vector<CollapseRequest> collapses;  // after the moves
  std::vector<RegionCut> cuts;
  std::vector<PingPong> pingPongs;
  PredictionReport prediction;
};

// What a process told mtmd about itself (mtmctl hint, mtm/hint.h): "phase N begins now", or
// "these ranges are used together".
struct Hint {
  int pid = 0;
  bool phase = true;  // else a group
  uint32_t number = 0;
  std::vector<AddressRange> ranges;
};

class Policy {
 public:
  static constexpr std::string_view kRole = "policy";
  struct Context {
    const config::Config& config;
  };
  virtual ~Policy() = default;
  // Learns from an interval's snapshot and plans for it.
  virtual Plan plan(const profiler::Snapshot& snapshot, const config::TierMap& tiers) = 0;
  // Learns from an interval's snapshot with no plan (mtmd plans no interval in which the moves
  // of an earlier one still run): what a policy learns over time sees every interval.
  virtual void observe(const profiler::Snapshot& /*snapshot*/, const config::TierMap& /*tiers*/) {}
  // Takes a hint, or says why not (a policy that does not predict takes none).
  virtual Status hint(const Hint& hint);
  // The rate the mover has really moved pages at lately, in bytes per second (smoothed over its
  // runs of 1 MiB or more): what a policy that times moves ahead of need plans with.
  virtual void moveRate(double /*bytesPerSecond*/) {}
};

}  // namespace mtm::policy
