#pragma once
// One interval's plan under the MTM rules: one global ranking (effective hotness, MoveValue.h);
// hot regions in lower tiers straight to the fastest tier with room (memory predicted ahead of
// its phase: the top tier or nowhere), making room there by sending its coldest regions one tier
// down; tiers short of free memory shed cold regions.
//
// Every promotion is a transaction: its moves and the demotions that make room for them are
// reserved against copies of the page budget, the tiers' room and the demotion cursors, and
// committed together -- or dropped together when the budget or room runs out, or when the moves
// do not pay (their benefit over the horizon is below their cost, doubled for every ping-pong
// the region's range has done). Each tier's demotion candidates sit in a list sorted coldest
// first with a cursor and running byte sums, so a plan takes O(N log N) in regions.

#include <cstdint>
#include <set>
#include <utility>
#include <vector>

#include "mtm/config/Config.h"
#include "mtm/config/TierMap.h"
#include "mtm/policy/MoveMemory.h"
#include "mtm/policy/MoveValue.h"
#include "mtm/policy/Policy.h"
#include "mtm/profiler/Snapshot.h"

namespace mtm::policy {

// Whole intervals in `seconds` at profiler.interval_ms, at least 1.
uint64_t intervalsIn(uint32_t seconds, const config::Config& config);

// A move of pid's pages to the first node of `tier`, the rest of the tier as fallbacks (tried
// while the destination is full).
MoveRequest requestToTier(int pid, const config::Tier& tier, MoveKind kind);

class Planner {
 public:
  using ThpSet = std::set<std::pair<int, uint64_t>>;  // (pid, 2 MiB-aligned address)
  Planner(const config::Config& config, const profiler::Snapshot& snapshot, const config::TierMap& tiers, MoveMemory& memory,
          ThpSet& splitThps);

  // Ranks, promotes, sheds; the plan's moves, cuts and ping-pongs (collapses are not its job).
  Plan run();

 private:
  struct Move {
    size_t region = 0;
    size_t from = 0, to = 0;
    MoveKind kind = MoveKind::Promotion;
    uint64_t start = 0, end = 0;  // the part of the region that moves
    bool hotPartOnly = false;     // a skewed THP region: only its hot eighths, split off
  };
  struct Transaction {
    std::vector<int64_t> free;   // per tier, as if the moves were done
    uint64_t budget = 0;         // pages left
    std::vector<size_t> cursor;  // per tier: next demotion candidate
    std::vector<Move> moves;
    double gainNs = 0, costNs = 0;
  };
  struct Candidates {  // a tier's demotion candidates, coldest first
    std::vector<size_t> regions;
    std::vector<double> hotness;            // demotionHotness(), ascending
    std::vector<uint64_t> bytesBefore;      // bytes of regions[0..k), one more entry than regions
    std::vector<uint64_t> keptBytesBefore;  // the same, of regions that make no room for a prediction
  };

  void rank();
  void collectCandidates();
  void promoteHot();
  void promote(size_t region);
  void shedToWatermarks();

  Transaction begin() const;
  // What room is made for: memory seen hot, memory predicted hot (predictedAhead), or a
  // watermark. Regions predicted to cool give room to either promotion; regions predicted ahead
  // or kept for a phase that follows only to memory seen hot; a watermark sheds neither of the
  // first two (RegionInfo).
  enum class RoomFor { seenHot, predictedHot, watermark };
  static RoomFor roomFor(const profiler::RegionInfo& promoted) {
    return promoted.predictedAhead ? RoomFor::predictedHot : RoomFor::seenHot;
  }
  // Whether r may not go down to make room for memory predicted hot.
  static bool keptFromPrediction(const profiler::RegionInfo& r) { return r.predictedAhead || r.keptForNext; }
  // Reserves demotions out of `tier` of candidates at or below `limit` until `bytes` are free
  // there. `wholeOrNothing`: false, reserving nothing, when they cannot free that much.
  bool reserveRoom(Transaction& tx, size_t tier, int64_t bytes, double limit, bool wholeOrNothing, RoomFor why) const;
  bool reserve(Transaction& tx, Move move) const;  // false: over the budget
  // Bytes of `tier`'s candidates at or below `limit` not yet reserved that may make room `why`
  // (those planned otherwise included: an upper bound).
  int64_t demotable(const Transaction& tx, size_t tier, double limit, RoomFor why) const;
  uint64_t demotedFrom(const profiler::RegionInfo& r, uint64_t need) const;
  bool pays(const Transaction& tx) const;
  void commit(Transaction& tx);

  int64_t spare(const Transaction& tx, size_t tier) const;   // room above the low watermark
  int64_t excess(const Transaction& tx, size_t tier) const;  // short of the high watermark
  // `disprovedMayGo`: a promotion that reads cold since holds no room for the rest of its
  // cooldown (for a promotion only: Planner.cpp).
  bool cooling(const profiler::RegionInfo& r, MoveKind kind, bool disprovedMayGo = false) const;
  uint64_t promotedBytes(const profiler::RegionInfo& r) const;
  bool splitsThp(const profiler::RegionInfo& r) const;
  double swapLimit(size_t region) const;
  double demotionHotness(const profiler::RegionInfo& r) const;

  const config::Config& config_;
  const profiler::Snapshot& snap_;
  const config::TierMap& tiers_;
  MoveMemory& memory_;
  ThpSet& splitThps_;
  const MoveValue value_;
  const uint64_t cooldown_;      // intervals
  std::vector<double> hotness_;  // effective, per region
  std::vector<size_t> order_;    // hottest first
  std::vector<bool> planned_;
  std::vector<bool> disproved_;  // in its promotion's cooldown, cold since: room for memory seen hot only
  std::vector<Candidates> candidates_;
  Transaction state_;  // what is committed so far
  Plan plan_;
};

}  // namespace mtm::policy
