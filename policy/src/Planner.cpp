#include "mtm/policy/Planner.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "mtm/Log.h"

namespace mtm::policy {
namespace {

constexpr uint64_t kPage = kPageSize;
constexpr uint64_t kThp = kThpSize;

// A skewed THP region's hot part: its hot eighths, adjacent ones joined.
std::vector<AddressRange> hotParts(const profiler::RegionInfo& r) {
  std::vector<AddressRange> out;
  const uint64_t eighth = (r.end - r.start) / 8;
  for (uint64_t i = 0; i < 8; ++i) {
    if ((r.hotEighths >> i & 1) == 0) continue;
    const uint64_t lo = r.start + i * eighth, hi = i == 7 ? r.end : lo + eighth;
    if (!out.empty() && out.back().end == lo)
      out.back().end = hi;
    else
      out.push_back({lo, hi});
  }
  return out;
}

// The error of a region's hotness, about 2 standard errors: 1 / sqrt(checks + 1).
double hotnessError(const profiler::RegionInfo& r) { return 1 / std::sqrt(std::max(0.0, r.confidence) + 1); }

// requestToTier, and when the kernel finds the whole tier full (ENOMEM: the free memory the plan
// was made with has gone), the tiers after it toward the region's own: still the fastest tier
// with room for a promotion, the next lower one with room for a demotion. Pages of the range
// that already lie above the destination of a promotion (below that of a demotion) stay.
MoveRequest request(int pid, const config::TierMap& tiers, size_t from, size_t to, MoveKind kind) {
  MoveRequest m = requestToTier(pid, tiers.tiers[to], kind);
  const bool up = kind == MoveKind::Promotion;
  const size_t last = up ? from : tiers.tiers.size();
  for (size_t t = to + 1; t < last; ++t)
    m.fallbackNodes.insert(m.fallbackNodes.end(), tiers.tiers[t].nodes.begin(), tiers.tiers[t].nodes.end());
  for (size_t t = up ? 0 : to + 1; t < (up ? to : tiers.tiers.size()); ++t)
    m.stayNodes.insert(m.stayNodes.end(), tiers.tiers[t].nodes.begin(), tiers.tiers[t].nodes.end());
  return m;
}

}  // namespace

uint64_t intervalsIn(uint32_t seconds, const config::Config& config) {
  return std::max<uint64_t>(1, uint64_t{seconds} * 1000 / std::max<uint32_t>(1, config.profiler.intervalMs));
}

MoveRequest requestToTier(int pid, const config::Tier& tier, MoveKind kind) {
  MoveRequest m;
  m.pid = pid;
  m.toNode = tier.nodes.front();
  m.fallbackNodes.assign(tier.nodes.begin() + 1, tier.nodes.end());
  m.kind = kind;
  return m;
}

Planner::Planner(const config::Config& config, const profiler::Snapshot& snapshot, const config::TierMap& tiers, MoveMemory& memory,
                 ThpSet& splitThps)
    : config_(config),
      snap_(snapshot),
      tiers_(tiers),
      memory_(memory),
      splitThps_(splitThps),
      value_(config, tiers),
      cooldown_(intervalsIn(config.policy.cooldownS, config)) {}

Plan Planner::run() {
  if (tiers_.tiers.size() < 2) return plan_;
  state_.budget = config_.migration.maxPagesPerInterval;
  for (const auto& t : tiers_.tiers) state_.free.push_back(static_cast<int64_t>(t.freeBytes));
  state_.cursor.assign(tiers_.tiers.size(), 0);
  rank();
  collectCandidates();
  promoteHot();
  shedToWatermarks();
  return std::move(plan_);
}

// One global ranking, hottest first by effective hotness -- memory seen hot before memory
// predicted hot ahead of its phase: a prediction takes the room that is left.
void Planner::rank() {
  hotness_.clear();
  for (const auto& r : snap_.regions) hotness_.push_back(effectiveHotness(r));
  order_.resize(snap_.regions.size());
  std::iota(order_.begin(), order_.end(), 0);
  std::stable_sort(order_.begin(), order_.end(), [&](size_t a, size_t b) {
    const bool aheadA = snap_.regions[a].predictedAhead, aheadB = snap_.regions[b].predictedAhead;
    return aheadA != aheadB ? aheadB : hotness_[a] > hotness_[b];
  });
  planned_.assign(snap_.regions.size(), false);
}

// Per tier, the regions that may go down now (not within their cooldown), coldest first by
// demotionHotness().
void Planner::collectCandidates() {
  candidates_.assign(tiers_.tiers.size(), {});
  disproved_.assign(snap_.regions.size(), false);
  std::vector<std::vector<std::pair<double, size_t>>> byTier(tiers_.tiers.size());
  for (auto it = order_.rbegin(); it != order_.rend(); ++it) {  // ties: the lower effective hotness first
    const auto& r = snap_.regions[*it];
    if (r.tier < 0 || static_cast<size_t>(r.tier) >= tiers_.tiers.size() || cooling(r, MoveKind::Demotion, true)) continue;
    // Only memory read cold can be held by a cooldown that it does not hold against memory seen hot.
    disproved_[*it] = r.hotness <= config_.policy.coldThreshold && cooling(r, MoveKind::Demotion);
    byTier[static_cast<size_t>(r.tier)].push_back({demotionHotness(r), *it});
  }
  for (size_t t = 0; t < byTier.size(); ++t) {
    std::stable_sort(byTier[t].begin(), byTier[t].end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    auto& c = candidates_[t];
    c.bytesBefore.push_back(0);
    c.keptBytesBefore.push_back(0);
    for (const auto& [hotness, i] : byTier[t]) {
      const auto& r = snap_.regions[i];
      c.regions.push_back(i);
      c.hotness.push_back(hotness);
      c.bytesBefore.push_back(c.bytesBefore.back() + (r.end - r.start));
      c.keptBytesBefore.push_back(c.keptBytesBefore.back() + (keptFromPrediction(r) ? r.end - r.start : 0));
    }
  }
}

// How hot a region counts as when it would go down: its hotness where that is cold, else the top
// of its error bar -- one standard error, half of hotnessError(). Not the confidence-
// weighed hotness that ranks promotions: that puts a region seen a few times below its true
// hotness, and a hot region checked less often than its neighbours (a smaller one) was swapped
// out for one just as hot (VM lab: 8 MiB of the hot set sent down for a 66 MiB region's 8 MiB,
// then held in tier 1 for its cooldown).
// A region predicted hot ahead of its phase counts as lukewarm (midway between the thresholds):
// after the cold, before the hot, the room memory seen hot needs may come from it (in the VM lab
// a misprediction, moved up ahead, held tier 0 for 7 s while the phase's real set waited).
double Planner::demotionHotness(const profiler::RegionInfo& r) const {
  if (r.predictedAhead) return (config_.policy.coldThreshold + config_.policy.hotThreshold) / 2;
  const double hotness = std::clamp(r.hotness, 0.0, 1.0);
  if (hotness <= config_.policy.coldThreshold) return hotness;
  return std::min(1.0, hotness + hotnessError(r) / 2);
}

// Fast promotion: hot regions in lower tiers, hottest first, each a transaction of its own.
void Planner::promoteHot() {
  const auto& pc = config_.policy;
  for (size_t i : order_) {
    const auto& r = snap_.regions[i];
    if (r.hotness < pc.hotThreshold + pc.promoteMargin) continue;  // ranked by effective hotness
    if (r.tier <= 0 || static_cast<size_t>(r.tier) >= tiers_.tiers.size() || planned_[i]) continue;
    if (cooling(r, MoveKind::Promotion)) {
      if (log::get().should_log(spdlog::level::debug))  // pingPongs() walks the records again
        MTM_DEBUG("plan hold pid={} range={:#x}-{:#x} hotness={:.2f} tier={}: cooling down (ping-pongs {})", r.pid, r.start, r.end,
                  r.hotness, r.tier, memory_.pingPongs(r.pid, r.start, r.end));
      continue;
    }
    promote(i);
    if (!planned_[i])
      MTM_DEBUG(
          "plan hold pid={} range={:#x}-{:#x} hotness={:.2f} tier={}: no room that pays (tier 0: {:.1f} MiB spare, {:.1f} MiB demotable)",
          r.pid, r.start, r.end, r.hotness, r.tier, double(spare(state_, 0)) / double(1 << 20),
          double(demotable(state_, 0, swapLimit(i), roomFor(r))) / double(1 << 20));
  }
}

// Region i goes to the fastest tier that has room or can make it -- by demoting its coldest
// regions: cold ones, or any at or below swapLimit() -- when that pays.
// A region too big for the room a tier has or can make, when that room is at least half of what
// is left of it, fills the room with its first whole 2 MiB units (demoting what makes the room)
// and the rest goes on to the next tier: a coarse region (its hot part not yet split off) is not
// held out of the top tier by its size. The profiler cuts the region where a part ends.
// Memory predicted ahead of its phase goes to the top tier or stays: moved ahead to a tier
// between, its copy is made again when the top tier's room comes (in the VM lab 114 MiB of a set
// went to tier 1 as its prediction began, and to tier 0 four seconds later as the phase before
// cooled); at its phase's start it is memory seen hot, which goes to the fastest tier with room.
void Planner::promote(size_t i) {
  const auto& r = snap_.regions[i];
  const size_t from = static_cast<size_t>(r.tier);
  const size_t below = r.predictedAhead ? std::min<size_t>(1, from) : from;  // the tiers it may go to: [0, below)
  const bool hotPartOnly = splitsThp(r);                                     // a THP's hot part: never cut
  const double limit = swapLimit(i);
  const RoomFor why = roomFor(r);
  Transaction tx = begin();
  uint64_t start = r.start;
  for (size_t to = 0; to < below; ++to) {
    const uint64_t size = start == r.start ? promotedBytes(r) : r.end - start;
    Transaction attempt = tx;
    const int64_t short_ = static_cast<int64_t>(size) - spare(attempt, to);
    if ((short_ <= 0 || reserveRoom(attempt, to, short_, limit, true, why)) &&
        reserve(attempt, {i, from, to, MoveKind::Promotion, start, r.end, hotPartOnly && start == r.start}) && pays(attempt)) {
      commit(attempt);
      return;
    }
    // At least half of what is left, so that a region merely larger than a tier's spare memory
    // at the moment still moves whole (to the next tier, then up once room is made). The room
    // counts what demotions can free: a region bigger than all a tier can ever free would
    // otherwise wait for it forever.
    if (hotPartOnly) continue;
    Transaction part = tx;
    const int64_t have = spare(part, to), could = have + demotable(part, to, limit, why);
    if (2 * could < static_cast<int64_t>(size)) continue;
    if (could > have && !reserveRoom(part, to, could - have, limit, false, why)) continue;
    const int64_t room = spare(part, to);
    if (room <= 0) continue;
    // A room that holds the rest whole: the whole move was tried above and did not go.
    const uint64_t cut = (start + static_cast<uint64_t>(room)) & ~(kThp - 1);
    if (cut >= r.end) continue;
    if (cut > start && reserve(part, {i, from, to, MoveKind::Promotion, start, cut, false})) {
      tx = std::move(part);
      start = cut;
    }
  }
  if (!tx.moves.empty() && pays(tx)) commit(tx);
}

// Watermarks: a tier short of free memory sheds its coldest regions one tier down (to the next
// lower tier with room), whatever the value: free memory is what the kernel needs. Not those
// only predicted to cool: they make room for the memory predicted next, or stay (in the VM lab
// the current phase's set, still read, was shed a few MiB an interval from 4 s before its end,
// once the next set's promotion had taken tier 0 below its high watermark).
void Planner::shedToWatermarks() {
  for (size_t t = 0; t + 1 < tiers_.tiers.size(); ++t) {
    const int64_t short_ = excess(state_, t);
    if (short_ <= 0) continue;
    Transaction tx = begin();
    if (reserveRoom(tx, t, short_, config_.policy.coldThreshold, false, RoomFor::watermark)) commit(tx);
  }
}

Planner::Transaction Planner::begin() const {
  Transaction tx;
  tx.free = state_.free;
  tx.budget = state_.budget;
  tx.cursor = state_.cursor;
  return tx;
}

bool Planner::reserveRoom(Transaction& tx, size_t tier, int64_t bytes, double limit, bool wholeOrNothing, RoomFor why) const {
  const auto& c = candidates_[tier];
  size_t& at = tx.cursor[tier];
  if (c.regions.empty()) return false;
  const size_t end = static_cast<size_t>(std::upper_bound(c.hotness.begin(), c.hotness.end(), limit) - c.hotness.begin());
  if (wholeOrNothing && (at >= end || static_cast<int64_t>(c.bytesBefore[end] - c.bytesBefore[at]) < bytes)) return false;
  int64_t freed = 0;
  for (; at < end && freed < bytes; ++at) {
    const size_t i = c.regions[at];
    const auto& r = snap_.regions[i];
    if (planned_[i] || (why == RoomFor::watermark && (r.coolingPredicted || r.predictedAhead)) ||
        (why != RoomFor::seenHot && disproved_[i]) || (why == RoomFor::predictedHot && keptFromPrediction(r)))
      continue;
    const uint64_t start = demotedFrom(r, static_cast<uint64_t>(bytes - freed)), size = r.end - start;
    for (size_t down = tier + 1; down < tiers_.tiers.size(); ++down) {
      if (spare(tx, down) < static_cast<int64_t>(size)) continue;
      if (!reserve(tx, {i, tier, down, MoveKind::Demotion, start, r.end, false})) return false;
      freed += static_cast<int64_t>(size);
      break;
    }
  }
  return freed >= bytes || (!wholeOrNothing && freed > 0);
}

// Where a demotion of r that must free `need` bytes begins: a region at least twice the need
// (from a 2 MiB boundary) gives only its tail -- a coarse cold region does not go down whole for
// a few MiB of room, and when its memory turns hot again only that tail must come back; the
// profiler cuts the region there. A smaller one goes whole: cut into ever smaller pieces, the
// pieces' histories part and each moves on its own.
uint64_t Planner::demotedFrom(const profiler::RegionInfo& r, uint64_t need) const {
  const uint64_t cut = (r.end - std::min(r.end - r.start, need)) & ~(kThp - 1);
  return cut > r.start && r.end - cut <= (r.end - r.start) / 2 ? cut : r.start;
}

int64_t Planner::demotable(const Transaction& tx, size_t tier, double limit, RoomFor why) const {
  const auto& c = candidates_[tier];
  if (c.regions.empty()) return 0;
  const size_t at = tx.cursor[tier];
  const size_t end = static_cast<size_t>(std::upper_bound(c.hotness.begin(), c.hotness.end(), limit) - c.hotness.begin());
  if (end <= at) return 0;
  const uint64_t kept = why == RoomFor::predictedHot ? c.keptBytesBefore[end] - c.keptBytesBefore[at] : 0;
  return static_cast<int64_t>(c.bytesBefore[end] - c.bytesBefore[at] - kept);
}

bool Planner::reserve(Transaction& tx, Move move) const {
  const auto& r = snap_.regions[move.region];
  const uint64_t bytes = move.hotPartOnly ? bytesOf(hotParts(r)) : move.end - move.start;
  const uint64_t pages = bytes / kPage;
  if (pages > tx.budget) return false;
  tx.budget -= pages;
  tx.free[move.from] += static_cast<int64_t>(bytes);
  tx.free[move.to] -= static_cast<int64_t>(bytes);
  // A demotion of memory predicted ahead loses what it counts as when it goes down, not the
  // raised hotness.
  const double hotness = move.kind == MoveKind::Demotion && r.predictedAhead ? demotionHotness(r) : hotness_[move.region];
  tx.gainNs += value_.accessGainNs(hotness, bytes, move.from, move.to);
  tx.costNs += value_.copyCostNs(bytes);
  tx.moves.push_back(move);
  return true;
}

// Whether the transaction's accesses sped up (less those slowed down) beat its copies, with a
// bar that doubles for each ping-pong the ranges it moves have done, and once more where a move
// would be one now.
bool Planner::pays(const Transaction& tx) const {
  uint32_t doublings = 0;
  for (const auto& m : tx.moves)
    doublings = std::max(doublings, memory_.barDoublings(snap_.regions[m.region].pid, m.start, m.end, m.kind, snap_.interval));
  return tx.gainNs > tx.costNs * std::ldexp(1.0, static_cast<int>(doublings));
}

void Planner::commit(Transaction& tx) {
  for (const auto& m : tx.moves) {
    const auto& r = snap_.regions[m.region];
    auto req = request(r.pid, tiers_, m.from, m.to, m.kind);
    req.ranges = m.hotPartOnly ? hotParts(r) : std::vector<AddressRange>{{m.start, m.end}};
    if (m.hotPartOnly) {
      req.splitPartialThps = true;
      for (uint64_t a = r.start & ~(kThp - 1); a < r.end; a += kThp) splitThps_.insert({r.pid, a});
    }
    if (!m.hotPartOnly) {  // a part of the region: the profiler cuts it where the part begins and ends
      const bool cutBefore = !plan_.cuts.empty() && plan_.cuts.back().pid == r.pid && plan_.cuts.back().addr == m.start;
      if (m.start > r.start && !cutBefore) plan_.cuts.push_back({r.pid, m.start});
      if (m.end < r.end) plan_.cuts.push_back({r.pid, m.end});
    }
    const uint64_t pages = bytesOf(req.ranges) / kPage;
    // Ping-pong pages: those that went back the way they came, whether or not they were half the
    // range (and so counted on it).
    const uint64_t backPages = std::min(
        pages, memory_.record(r.pid, m.start, m.end, m.kind, static_cast<int>(m.from), static_cast<int>(m.to), snap_.interval) / kPage);
    if (backPages > 0) {
      if (!plan_.pingPongs.empty() && plan_.pingPongs.back().pid == r.pid)
        plan_.pingPongs.back().pages += backPages;
      else
        plan_.pingPongs.push_back({r.pid, backPages});
    }
    plan_.moves.push_back(std::move(req));
    planned_[m.region] = true;
  }
  state_.free = std::move(tx.free);
  state_.budget = tx.budget;
  state_.cursor = std::move(tx.cursor);
}

int64_t Planner::spare(const Transaction& tx, size_t tier) const { return tx.free[tier] - tiers_.tiers[tier].lowWatermarkBytes(); }

int64_t Planner::excess(const Transaction& tx, size_t tier) const {
  const auto& t = tiers_.tiers[tier];
  return std::max<int64_t>(0, static_cast<int64_t>(t.highWatermark * double(t.capacityBytes)) - tx.free[tier]);
}

// Within the cooldown a region stays put -- unless every part of it that moved arrived and now
// goes on in the same direction (tier 3 -> 1 while tier 0 was full, then 1 -> 0): no ping-pong.
// The cooldown doubles for each ping-pong the range has done: a range whose hotness flips faster
// than its checks can tell (few checks, a mixed region) moves ever more rarely, where the doubled
// value bar alone (pays()) does not hold back moves worth a hundred times their copy. A region
// is held while half of it or more cools down, not while less does: the profiler merges memory
// that lies together, and in the VM lab 2 MiB promoted a moment before, merged into a predicted
// 64 MiB group that had never moved, held the group in tier 1 past its phase's start.
// With `disprovedMayGo`, a promotion that reads cold since (at or below cold_threshold) does not
// hold its room against memory seen hot, unless the range ping-ponged before: it was made on
// checks that the next ones did not bear out -- in the VM lab, 34 MiB that a workload's start-up
// wrote read hot once, went up, and held a quarter of the hot set out of tier 0 for the 10 s.
// Going down counts as its ping-pong, so a range that does it again waits out its doubled
// cooldown. Watermarks and predictions still wait (reserveRoom()).
bool Planner::cooling(const profiler::RegionInfo& r, MoveKind kind, bool disprovedMayGo) const {
  const bool disproved = disprovedMayGo && kind == MoveKind::Demotion && r.hotness <= config_.policy.coldThreshold;
  const uint64_t held = memory_.bytesWhere(r.pid, r.start, r.end, [&](const MoveRecord& m) {
    if (disproved && m.kind == MoveKind::Promotion && m.pingPongs == 0) return false;
    return snap_.interval < m.interval + (cooldown_ << m.pingPongs) && !(m.kind == kind && r.tier == m.toTier);
  });
  return held * 2 >= r.end - r.start && held > 0;
}

// How hot (demotionHotness) a resident may be to make room for region i: cold, or below i's
// effective hotness by promote_margin, or by the error of i's hotness where that is larger, so
// that a region seen a few times, whose hotness is mostly chance, does not swap places with one
// as warm as it (measured: on the 1 GiB trickle workload, such swaps moved 3x the oracle's bytes,
// half of them back again).
double Planner::swapLimit(size_t i) const {
  const auto& pc = config_.policy;
  return std::max(pc.coldThreshold, hotness_[i] - std::max(pc.promoteMargin, hotnessError(snap_.regions[i])));
}

bool Planner::splitsThp(const profiler::RegionInfo& r) const {
  return r.huge && r.skew >= config_.policy.thpSplitSkew && r.hotEighths != 0;
}

uint64_t Planner::promotedBytes(const profiler::RegionInfo& r) const { return splitsThp(r) ? bytesOf(hotParts(r)) : r.end - r.start; }

}  // namespace mtm::policy
