#pragma once
// A placement policy: from one interval's snapshot and the tier map, a plan of moves.
// Policies never touch /proc, /sys or perf; they only read what they are given.

#include <cstdint>
#include <string_view>
#include <vector>

#include "mtm/config/TierMap.h"
#include "mtm/profiler/Snapshot.h"

namespace mtm::policy {

struct Move {
  int pid = 0;
  uint64_t start = 0;   // [start, end), page-aligned
  uint64_t end = 0;
  int toNode = -1;
};

struct Plan {
  std::vector<Move> moves;  // in the order they should run: promotions first
};

class Policy {
 public:
  static constexpr std::string_view kRole = "policy";
  virtual ~Policy() = default;
  virtual Plan plan(const profiler::Snapshot& snapshot, const config::TierMap& tiers) = 0;
};

}  // namespace mtm::policy
