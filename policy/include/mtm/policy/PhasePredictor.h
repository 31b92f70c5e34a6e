#pragma once
// Predictive placement (policy.predict; the DyNN-Offload idea): learn which memory turns hot
// together, which of those groups follows which, and promote the next group's memory ahead of
// its need -- as a planner input (MtmPolicy raises the predicted regions' hotness), never as a
// move of its own.
//
// Per target, in 2 MiB chunks (a chunk is hot in an interval when regions at or above
// hot_threshold cover half of it):
// - Groups: chunks that cool in the same interval belong together (the end of a phase is sharp:
//   every chunk's hotness decays at once, where its start is found piecemeal by the checks). A
//   cooling cohort joins the group that holds half of it at least, else founds one, whose onset
//   is when half of the cohort was hot: so one cycle of a recurring pattern teaches its groups
//   and their order, and the second is predicted. When an episode's end joins -- a cohort of a
//   quarter of its group or more, hot for a quarter of the group's usual episode or more --
//   members not hot since its run began leave the group (noise that founded it, a start-up that
//   touched everything, does not stay in it), and a missed onset is re-dated to its run's start;
//   a smaller cohort changes neither. A cohort's chunks whose run began well before half of it
//   was hot, with another group's current episode, join that group instead (they cooled late:
//   a region holding them and the next phase's memory stayed warm). A group that a cohort
//   leaves with less than half its members, or fewer than two chunks, goes at once, with its
//   onsets and links (a start-up's fragments of one phase's memory, which that phase's end
//   gathers into one group). A chunk, once hot, stays hot while regions above
//   cold_threshold cover half of it (hysteresis).
// - Phases: an interval's phase is its set of active groups (half their chunks hot). Each time a
//   group becomes active (its onset), the groups of the onset before learn it as a successor,
//   with the lag between the two onsets (a running mean) and a weight. Groups whose onsets fall
//   in one interval are one phase -- and so is one whose onset comes within a quarter of the
//   usual episode of the group that began just before it: each is learned by the phase before,
//   and each learns what follows with an equal share of one sighting. A successor's confidence
//   is its weight's share of the phases that followed (links learned at the same onset are one
//   phase, weighing what its best-known member does). An onset learned late (a group found only
//   when it cooled, after the next had begun) takes its place among the recent onsets: A -> C
//   learned before is undone into A -> B -> C. One older than every onset known -- the first
//   phase, found as it ended -- takes the place of the onsets inside its episode of groups that
//   ended before it did (a start-up's pieces of other memory), and their links to each other go.
// - Prediction: when the latest phase's (its largest group's) successors have confidence >=
//   min_confidence and their expected onset (less twice the lag's mean deviation: phases vary in
//   length) is at most horizon_s away -- and the latest phase's groups hold most of the memory
//   that turned hot since the phase before began (else the phase under way is not known yet: a
//   few of its chunks, hot at start-up, stand for it; in the VM lab they predicted the cycle's
//   first phase in its third's place, 64 MiB moved up for nothing) -- their chunks are
//   predicted hot, with the hotness and confidence the group last showed, until it becomes
//   active (a hit) or its expected onset is half a lag and twice the deviation past (a miss: its
//   bytes count as mispredicted, the transition's weight halves, and until a prediction from
//   the same group hits only its links seen at two onsets are confident). Once a group's episode
//   began -- one that was predicted, or of a group with two episodes behind it -- its members
//   not yet seen hot count as hot until the horizon before its usual end: memory moved up for it
//   stays there.
//   The group before it, when its episodes usually end by then, is predicted to cool from as
//   long before its usual end as half the swap takes -- it going down and the predicted groups
//   (the whole phase to come) coming up, in turns, at the rate the mover has really moved lately
//   -- and one interval more, so that the swap straddles the end: the plan may send it down to
//   make the room (a tier that holds one phase's memory, not two), and a phase that runs long
//   keeps its memory until then.
//   Where no rate is measured yet, or the phase to come does not fit the top tier's room for the
//   target, or the swap does not fit horizon_s (swapFits): from one copy of the predicted groups
//   at migration.max_rate and one interval more. A set still read that goes down early loses its
//   accesses, and where the next phase cannot be placed whole the early start gains less (VM lab,
//   TCG, room for 0.7 of a set: from the whole horizon, 4 s early, 0.51-0.54 of the hot set on
//   top against reactive's 0.62; from the swap, 0.48-0.55 against 0.57-0.61; one copy early, 0.57
//   against 0.58).
//   Where the swap fits, the groups that follow the predicted ones, by confident links, before
//   the phase under way comes again are kept: the plan takes no room from them for the
//   prediction. Of the memory on top, the phase under way is used again last, so the room comes
//   from it as it cools (the choice of Belady's cache, which evicts what is used furthest
//   ahead). A tier that holds two phases of a cycle of three swaps one every other phase -- as
//   often as reactive placement -- where taking the room from the coldest (the phase before,
//   used right after the predicted one) swapped one every phase (VM lab: 1.31x reactive's bytes;
//   with the keep 0.84-0.91x). The room then opens late, so the swap's time must be the mover's
//   real one: from max_rate (512 MiB/s, where TCG moves 30-140) phases began with 0.67 of their
//   set on top.
// - Hints (mtmctl hint, mtm/hint.h): "these ranges are used together" founds a group of their
//   chunks at once; "phase N begins" predicts at once the groups whose onsets fell in phase N
//   last time, and the onsets that follow are filed under N.
// Memory is bounded: chunks, groups, successors and hinted phases per target have caps, and a
// target's state goes when it exits.

#include <cstdint>
#include <functional>
#include <map>
#include <unordered_map>
#include <vector>

#include "mtm/Result.h"
#include "mtm/config/Config.h"
#include "mtm/policy/Policy.h"
#include "mtm/profiler/Snapshot.h"

namespace mtm::policy {

struct PredictorLimits {
  size_t chunksPerTarget = 1 << 16;  // 128 GiB of memory that was ever hot
  size_t groupsPerTarget = 256;
  size_t successorsPerGroup = 8;
  size_t hintedPhasesPerTarget = 256;
  size_t groupsPerHintedPhase = 32;
};

class PhasePredictor {
 public:
  using Limits = PredictorLimits;
  static constexpr uint64_t kChunkBytes = 2ull << 20;

  struct Prediction {
    int pid = 0;
    uint64_t start = 0, end = 0;  // one chunk run
    double hotness = 0, confidence = 0;
    // For a group whose episode has not begun (else: an active group's members not seen hot yet).
    bool ahead = false;
  };
  struct Stats {
    uint64_t groups = 0;          // now
    uint64_t transitions = 0;     // successor links now
    uint64_t predictions = 0;     // made so far
    uint64_t hits = 0;            // predicted groups that became active in time
    uint64_t misses = 0;          // ... that did not
    uint64_t predictedBytes = 0;  // chunks predicted hot, summed over predictions
    uint64_t mispredictedBytes = 0;
    uint64_t activeGroups = 0;  // the current phase's size, over all targets
  };

  explicit PhasePredictor(const config::Config& config, Limits limits = {});

  // Learns from one interval's snapshot and updates the predictions.
  void observe(const profiler::Snapshot& snapshot);
  // Takes a process's hint (applied from the next interval on); errors say what was wrong.
  Status hint(const Hint& hint);
  // The mover's measured rate, in bytes per second (Policy::moveRate): it times the swaps.
  void setMoveRate(double bytesPerSecond);
  // The top tier's free bytes above its low watermark, for the next observe() (unset: no limit
  // known): with each target's own bytes there, the most of a group the tier could take. Targets
  // share it in pid order: each one's next phase claims what it needs beyond its own bytes there.
  void setTopFree(uint64_t bytes) { topFree_ = bytes; }
  // Chunk runs to treat as hot in this interval's plan. These lists are sorted by (pid, start).
  const std::vector<Prediction>& predictions() const { return predictions_; }
  // Chunk runs of active groups expected to have cooled when a predicted group begins (their
  // episodes usually end by then): the plan may treat them as cold, to make the room.
  const std::vector<Prediction>& coolings() const { return coolings_; }
  // Chunk runs of groups that follow a predicted group before the phase under way comes again:
  // the plan keeps them where they are rather than make the predicted group room with them.
  const std::vector<Prediction>& keeps() const { return keeps_; }
  Stats stats() const;
  // Chunks, groups and successors held, over all targets (for tests of the bounds).
  size_t entries() const;

 private:
  struct Chunk {
    bool hot = false;
    uint32_t group = 0;  // 0: none
    uint64_t hotSince = 0, lastHot = 0;
    double hotness = 0, confidence = 0;  // the peak of its last hot run
  };
  struct Successor {
    uint32_t group = 0;
    double weight = 0;
    double lagMean = 0;      // intervals between the two onsets
    double lagDev = 0;       // their mean absolute deviation from lagMean
    uint64_t seen = 0;       // the onset of `group` it was last learned at: links seen at one onset are one phase
    uint32_t sightings = 0;  // onsets it was learned at
  };
  struct Group {
    std::vector<uint64_t> members;  // chunk indices, sorted
    bool active = false;
    uint64_t activeSince = 0;  // the first interval of its current run of activity
    uint64_t onset = 0, lastActive = 0;
    double hotness = 0, confidence = 0;  // its members' mean peak while last active
    double duration = 0;                 // intervals from onset to cooling, a running mean (0: not seen)
    double durations = 0;                // episodes behind it
    std::vector<Successor> successors;
    // A prediction from it missed, and none has hit since: only successors seen twice or more
    // are confident (confidentSuccessors). A link seen once is as good a guess as a cycle's first
    // and may be taken once; after a miss, a group followed by a new phase each time would
    // otherwise predict each new one (VM lab, a recurring phase between random ones: 6 of 7
    // predictions missed, 18.6% of the bytes moved; halving the missed link's weight did not stop
    // it, the new link outweighed the halved one).
    bool missedSinceHit = false;
    bool predictedEpisode = false;  // its current episode was predicted (a hit)
  };
  struct Pending {  // a prediction waiting for its group's onset
    uint32_t group = 0;
    uint64_t expected = 0, giveUp = 0;
    uint32_t from = 0;
  };
  struct Target {
    std::unordered_map<uint64_t, Chunk> chunks;
    int64_t hintedPhase = -1;                               // the phase the process said it is in
    std::map<uint32_t, std::vector<uint32_t>> phaseGroups;  // hinted phase -> groups whose onset fell in it
    std::map<uint32_t, Group> groups;
    uint32_t nextGroup = 1;
    std::vector<std::pair<uint64_t, uint32_t>> onsets;  // the latest (interval, group), in time order
    std::vector<Pending> pending;
    uint64_t topRoom = UINT64_MAX;  // its bytes in the top tier and the free room left to it, this interval
  };

  void observeTarget(int pid, Target& t, const std::vector<const profiler::RegionInfo*>& regions, uint64_t interval);
  void markChunks(Target& t, const std::vector<const profiler::RegionInfo*>& regions, uint64_t interval,
                  std::vector<uint64_t>& cooled) const;
  void learnGroup(Target& t, std::vector<uint64_t> cohort, uint64_t interval);
  // Moves the cohort's chunks that began with another group's episode into that group.
  static void joinGroupsBegunWith(Target& t, std::vector<uint64_t>& cohort);
  // When half of the cohort's chunks were hot (non-empty; its chunks are followed).
  static uint64_t halfHotSince(const Target& t, const std::vector<uint64_t>& cohort);
  void updateActivity(Target& t, uint64_t interval);
  // Group `group` became active at `interval` (for a group just founded, or one whose onset was
  // missed, when its chunks turned hot: learned when they cool). Onsets are linked in time order:
  // a late one goes between the recent onsets it fell between.
  void onset(Target& t, uint32_t group, uint64_t interval);
  // For a late onset older than every one known (the first phase, found only as it ended): the
  // oldest onsets, up to the first of a group not ended yet, of groups that ended before `group`
  // did -- pieces of a start-up that touched all memory, cooling while the first phase ran --
  // were no phases between it and the next. They go, with what they learned of each other, and
  // true is returned; false (nothing dropped) where some onset of an ended group follows one of a
  // group not ended (history older than what is kept).
  bool dropOnsetsInside(Target& t, uint32_t group);
  // `weight` more (or fewer) sightings of `to` following `from`: 1, or a share of one where
  // several groups began in the same interval.
  // `seen`: to's onset.
  void learn(Target& t, uint32_t from, uint32_t to, uint64_t lagIntervals, double weight, uint64_t seen);
  void unlearn(Target& t, uint32_t from, uint32_t to, double weight);
  void predict(int pid, Target& t, uint64_t interval);
  // The successors of g that predictions follow: those with min_confidence of the phases that
  // followed g (links learned at the same onset are one phase, weighing what its best-known
  // member does: groups that always begin together are each as sure as the phase).
  std::vector<const Successor*> confidentSuccessors(const Target& t, const Group& g) const;
  // Adds to keeps_ the groups reached through confident links, up to an active group, from the
  // pending predictions whose swap fits.
  void keepFollowers(int pid, const Target& t);
  // Whether the latest phase's groups hold most of the memory that turned hot since the phase
  // before began (its onset: phaseBefore, 0 for none): if not, the phase under way is not known
  // yet -- a few chunks of it, hot at start-up, stand for it -- and what it would predict is not
  // its own.
  static bool knowsPhase(const Target& t, const std::vector<uint32_t>& phase, uint64_t phaseBefore);
  void forgetStale(Target& t, uint64_t interval);
  // Removes the groups `gone` says to, with their onsets, links, predictions and hinted phases.
  static void dropGroups(Target& t, const std::function<bool(uint32_t id, const Group&)>& gone);
  // Whether active group g's episode, at its usual length, ends by `giveUp` and within the
  // horizon of `interval`.
  bool endsWithin(const Group& g, uint64_t interval, uint64_t giveUp, uint64_t lead) const;
  // The bytes of t's pending predictions: the groups of the phase to come, placed together.
  uint64_t predictedBytes(const Target& t) const;
  // Intervals the swap that makes t's predictions room takes: the groups ahead going down and
  // the predicted ones coming up, at the mover's measured rate (migration.max_rate until known).
  uint64_t swapIntervals(const Target& t) const;
  // Intervals before the groups ahead end that the room for t's predictions may start to be
  // made: where the swap fits (swapFits), half the swap and one interval more; else one copy of the
  // predicted groups at migration.max_rate and one more (at most the horizon).
  uint64_t coolingLead(const Target& t) const;
  // Whether t's predictions can be placed ahead whole, by a swap timed from a measured rate: they
  // fit the top tier's room for the target, and the swap fits the horizon. Only then are the
  // groups that follow kept (keepFollowers) and the cooling timed from the swap; a phase larger
  // than the room only trades part of the set in use for part of the next, and an early start
  // loses what it gains (VM lab, room for 0.7 of a set split into two groups that each fit:
  // 0.55 of the hot set on top against reactive's 0.58).
  bool swapFits(const Target& t) const {
    return measuredBytesPerInterval_ > 0 && predictedBytes(t) <= t.topRoom && swapIntervals(t) + 1 <= horizon_;
  }
  uint64_t bytesOf(const Group& g) const { return g.members.size() * kChunkBytes; }
  // A prediction of `group` from now until `patience` intervals past `expected`.
  void expect(Target& t, uint32_t group, uint64_t expected, uint64_t patience, uint32_t from);
  // Adds g's members not hot now to this interval's predictions (`ahead`: g has not begun).
  void predictUnseen(int pid, const Target& t, const Group& g, bool ahead);

  const double hotThreshold_;
  const double coldThreshold_;
  const double minConfidence_;
  const uint64_t horizon_;               // intervals
  const double bytesPerInterval_;        // migration.max_rate over one interval
  const double intervalS_;               // profiler.interval_ms, in seconds
  double measuredBytesPerInterval_ = 0;  // the mover's measured rate over one interval (0: none yet)
  uint64_t topFree_ = UINT64_MAX;        // setTopFree
  uint64_t freeLeft_ = UINT64_MAX;       // of topFree_, what the targets observed so far left unclaimed
  const Limits limits_;
  std::map<int, Target> targets_;
  std::vector<Prediction> predictions_, coolings_, keeps_;
  uint64_t now_ = 0;  // the interval being observed, or next
  uint64_t predictionsMade_ = 0, hits_ = 0, misses_ = 0, predictedBytes_ = 0, mispredictedBytes_ = 0;
};

}  // namespace mtm::policy
