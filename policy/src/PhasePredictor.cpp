#include "mtm/policy/PhasePredictor.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <tuple>

#include "mtm/Log.h"

namespace mtm::policy {
namespace {

constexpr size_t kMinGroupChunks = 2;    // a cohort smaller than this is noise
constexpr double kJoinOverlap = 0.5;     // of the cohort
constexpr double kEpisodeShare = 0.25;   // of its group: a cohort that ends an episode
constexpr uint64_t kForgetAfter = 4096;  // intervals without being hot
constexpr double kLagSmoothing = 4;      // running mean over about this many onsets
constexpr uint64_t kMinPatience = 2;     // intervals a prediction waits past its expected onset
constexpr uint64_t kOnsetIntervals = 2;  // a group active this long in a row began
constexpr size_t kRecentOnsets = 8;      // onsets kept per target, to place a late one among them
constexpr uint64_t kHintPatience = 8;    // ... and a hinted phase's groups: the checks find them piecemeal
// A hinted group never seen hot yet is predicted this far from hot_threshold to 1, with this confidence.
constexpr double kHintedLift = 0.5, kHintedConfidence = 8;

// Adds chunk c to `runs`, joining the last run when it ends where c begins and is alike.
void appendRun(std::vector<PhasePredictor::Prediction>& runs, int pid, uint64_t c, double hotness, double confidence, bool ahead) {
  constexpr uint64_t kChunk = PhasePredictor::kChunkBytes;
  if (!runs.empty() && runs.back().pid == pid && runs.back().end == c * kChunk && runs.back().ahead == ahead)
    runs.back().end += kChunk;
  else
    runs.push_back({pid, c * kChunk, (c + 1) * kChunk, hotness, confidence, ahead});
}

}  // namespace

PhasePredictor::PhasePredictor(const config::Config& config, Limits limits)
    : hotThreshold_(config.policy.hotThreshold),
      coldThreshold_(config.policy.coldThreshold),
      minConfidence_(config.policy.predict.minConfidence),
      horizon_(uint64_t{config.policy.predict.horizonS} * 1000 / std::max<uint32_t>(1, config.profiler.intervalMs)),
      bytesPerInterval_(std::max(1.0, double(config.migration.maxRateBytes) * double(config.profiler.intervalMs) / 1000.0)),
      intervalS_(double(config.profiler.intervalMs) / 1000.0),
      limits_(limits) {}

void PhasePredictor::setMoveRate(double bytesPerSecond) {
  if (bytesPerSecond > 0) measuredBytesPerInterval_ = std::min(bytesPerInterval_, bytesPerSecond * intervalS_);
}

void PhasePredictor::observe(const profiler::Snapshot& snap) {
  now_ = snap.interval;
  for (int pid : snap.exited) targets_.erase(pid);
  std::map<int, std::vector<const profiler::RegionInfo*>> byPid;
  for (const auto& r : snap.regions) byPid[r.pid].push_back(&r);
  predictions_.clear();
  coolings_.clear();
  keeps_.clear();
  freeLeft_ = topFree_;
  for (auto& [pid, regions] : byPid) {
    auto [it, added] = targets_.try_emplace(pid);
    observeTarget(pid, it->second, regions, snap.interval);
  }
  // By address: the policy looks each region up in them. Runs of one list and pid do not overlap
  // (a chunk is of one group) or are the same (two predictions cooling one group), so their ends
  // are in order too.
  const auto byAddress = [](const Prediction& a, const Prediction& b) {
    return std::tie(a.pid, a.start, a.end) < std::tie(b.pid, b.start, b.end);
  };
  for (auto* runs : {&predictions_, &coolings_, &keeps_}) std::sort(runs->begin(), runs->end(), byAddress);
}

void PhasePredictor::observeTarget(int pid, Target& t, const std::vector<const profiler::RegionInfo*>& regions, uint64_t interval) {
  uint64_t ownTop = 0;
  for (const auto* r : regions) ownTop += r->tier == 0 ? r->end - r->start : 0;
  t.topRoom = freeLeft_ == UINT64_MAX ? UINT64_MAX : freeLeft_ + ownTop;
  std::vector<uint64_t> cooled;
  markChunks(t, regions, interval, cooled);
  learnGroup(t, std::move(cooled), interval);
  updateActivity(t, interval);
  predict(pid, t, interval);
  // The tier's free room is shared: what t's next phase needs beyond t's own bytes there is not
  // there for the targets after it.
  if (freeLeft_ != UINT64_MAX) freeLeft_ -= std::min(freeLeft_, predictedBytes(t) - std::min(predictedBytes(t), ownTop));
  forgetStale(t, interval);
}

// A chunk is hot when hot regions cover half of it; those that were hot and are not any more
// have cooled.
void PhasePredictor::markChunks(Target& t, const std::vector<const profiler::RegionInfo*>& regions, uint64_t interval,
                                std::vector<uint64_t>& cooled) const {
  struct Cover {
    uint64_t hotBytes = 0, warmBytes = 0;  // at or above hot_threshold; above cold_threshold
    double hotness = 0, confidence = 0;
  };
  std::unordered_map<uint64_t, Cover> cover;
  for (const auto* r : regions) {
    if (r->hotness <= coldThreshold_) continue;
    for (uint64_t c = r->start / kChunkBytes; c * kChunkBytes < r->end; ++c) {
      const uint64_t lo = std::max(r->start, c * kChunkBytes), hi = std::min(r->end, (c + 1) * kChunkBytes);
      Cover& k = cover[c];
      k.warmBytes += hi - lo;
      if (r->hotness < hotThreshold_) continue;
      k.hotBytes += hi - lo;
      k.hotness = std::max(k.hotness, r->hotness);
      k.confidence = std::max(k.confidence, r->confidence);
    }
  }
  // Hysteresis: a chunk turns hot when hot regions cover half of it, and stays hot while regions
  // above cold_threshold do -- a hotness that hovers at the threshold (few checks an interval)
  // does not make a phase end and begin again.
  for (const auto& [index, k] : cover) {
    auto it = t.chunks.find(index);
    const bool wasHot = it != t.chunks.end() && it->second.hot;
    if ((wasHot ? k.warmBytes : k.hotBytes) * 2 < kChunkBytes) continue;
    if (it == t.chunks.end()) {
      if (t.chunks.size() >= limits_.chunksPerTarget) continue;
      it = t.chunks.emplace(index, Chunk{}).first;
    }
    Chunk& chunk = it->second;
    if (!chunk.hot) {  // a new hot run: its peak is what a prediction of it will claim
      chunk.hotSince = interval;
      chunk.hotness = chunk.confidence = 0;
    }
    chunk.hot = true;
    chunk.lastHot = interval;
    chunk.hotness = std::max(chunk.hotness, k.hotness);
    chunk.confidence = std::max(chunk.confidence, k.confidence);
  }
  for (auto& [index, chunk] : t.chunks)
    if (chunk.hot && chunk.lastHot != interval) {
      chunk.hot = false;
      cooled.push_back(index);
    }
}

// When half of the cohort was hot (the median of its chunks' runs' starts), as a group's onset is
// when half its members are: a chunk kept warm since long before (a region straddling another
// phase's memory) does not date it back.
uint64_t PhasePredictor::halfHotSince(const Target& t, const std::vector<uint64_t>& cohort) {
  std::vector<uint64_t> starts;
  starts.reserve(cohort.size());
  for (uint64_t c : cohort) starts.push_back(t.chunks.at(c).hotSince);
  const auto half = starts.begin() + static_cast<std::ptrdiff_t>((starts.size() - 1) / 2);
  std::nth_element(starts.begin(), half, starts.end());
  return *half;
}

// The chunks that cooled together join the group they overlap most, or found one.
void PhasePredictor::learnGroup(Target& t, std::vector<uint64_t> cohort, uint64_t interval) {
  if (cohort.size() < kMinGroupChunks) return;
  std::sort(cohort.begin(), cohort.end());
  joinGroupsBegunWith(t, cohort);
  if (cohort.size() < kMinGroupChunks) return;
  std::map<uint32_t, size_t> overlap;
  for (uint64_t c : cohort)
    if (uint32_t g = t.chunks[c].group; g != 0) ++overlap[g];
  uint32_t best = 0;
  double bestShare = 0;
  for (const auto& [g, n] : overlap) {
    auto it = t.groups.find(g);
    if (it == t.groups.end()) continue;
    const double share = double(n) / double(cohort.size());
    if (share > bestShare) {
      best = g;
      bestShare = share;
    }
  }
  if (bestShare < kJoinOverlap) {
    if (t.groups.size() >= limits_.groupsPerTarget) {  // the group active longest ago goes
      auto oldest = std::min_element(t.groups.begin(), t.groups.end(),
                                     [](const auto& a, const auto& b) { return a.second.lastActive < b.second.lastActive; });
      for (uint64_t c : oldest->second.members)
        if (auto it = t.chunks.find(c); it != t.chunks.end()) it->second.group = 0;
      t.groups.erase(oldest);
    }
    best = t.nextGroup++;
    t.groups[best].lastActive = interval;
  }
  const bool founded = t.groups[best].members.empty();
  Group& group = t.groups[best];
  double hotness = 0, confidence = 0;
  const uint64_t since = std::min(interval, halfHotSince(t, cohort));
  std::map<uint32_t, size_t> left;  // groups the cohort took members from, and their sizes before
  for (uint64_t c : cohort) {
    Chunk& chunk = t.chunks[c];
    if (chunk.group != 0 && chunk.group != best)
      if (auto old = t.groups.find(chunk.group); old != t.groups.end()) {
        auto& m = old->second.members;
        left.try_emplace(chunk.group, m.size());
        m.erase(std::remove(m.begin(), m.end(), c), m.end());
      }
    chunk.group = best;
    hotness += chunk.hotness;
    confidence += chunk.confidence;
  }
  // Groups that keep less than half their memory go, with their onsets and links: their history
  // is that of memory now in this group (a start-up's fragments of it, which began with it, would
  // stand for it in the phases learned, and be predicted with it). Their last chunks are free to
  // join the groups they cool with.
  dropGroups(t, [&](uint32_t id, const Group& g) {
    const auto it = left.find(id);
    return it != left.end() && (g.members.size() < kMinGroupChunks || g.members.size() * 2 < it->second);
  });
  std::vector<uint64_t> members;
  std::set_union(group.members.begin(), group.members.end(), cohort.begin(), cohort.end(), std::back_inserter(members));
  // An episode's end: a good share of the group, hot for a good share of the group's usual
  // episode (not a few chunks that flickered, nor a quarter of it read hot for a moment by a
  // region that straddles two phases' memory). Members that took no part in it (not hot since
  // its run began) leave: a group founded by noise -- a start-up that touches everything --
  // narrows to what recurs.
  const bool episode =
      double(cohort.size()) >= kEpisodeShare * double(group.members.size()) && double(interval - since) >= kEpisodeShare * group.duration;
  if (episode)
    std::erase_if(members, [&](uint64_t c) {
      auto it = t.chunks.find(c);
      if (it != t.chunks.end() && it->second.lastHot >= since) return false;
      if (it != t.chunks.end()) it->second.group = 0;
      return true;
    });
  group.members = std::move(members);
  // What a prediction of the group claims: how hot its episodes run. A few chunks that flickered
  // say nothing of that (seen in the VM lab: 8 chunks of B that read 0.50 for a moment joined B's
  // 33, and B's next prediction, at 0.50, was below what the planner promotes).
  if (founded || episode) {
    group.hotness = hotness / double(cohort.size());
    group.confidence = confidence / double(cohort.size());
  }
  MTM_DEBUG("predict group={} {} cohort_chunks={} members={} hotness={:.2f}", best, founded ? "founded" : "joined", cohort.size(),
            group.members.size(), group.hotness);
  // A founded group's onset, or a joined one's that was missed (too few of its members were hot
  // for it to turn active): when the cohort's run began. A few chunks that flickered are no
  // episode: their run says nothing of when the group began. The episode that ended, from that
  // onset to now, counts before the onset is placed among the others (its length says which
  // phase a late onset is of).
  const bool missed = founded || (episode && group.onset < since);
  if (missed) group.onset = since;
  if (group.onset <= interval && (founded || group.lastActive + 1 >= interval)) {
    group.durations = std::min(group.durations + 1, kLagSmoothing);
    group.duration += (double(interval - group.onset) - group.duration) / group.durations;
  }
  if (missed) onset(t, best, since);
}

// Chunks of the cohort whose run began well before half of it was hot, together with another
// group's current episode, join that group: they cooled late (a region holding them and the next
// phase's memory stayed warm), not with this phase (seen in the VM lab: 11 of B's 32 chunks
// cooled with C every cycle, and B's prediction moved 21).
void PhasePredictor::joinGroupsBegunWith(Target& t, std::vector<uint64_t>& cohort) {
  const uint64_t since = halfHotSince(t, cohort);
  std::erase_if(cohort, [&](uint64_t c) {
    Chunk& chunk = t.chunks[c];
    if (chunk.hotSince + kOnsetIntervals >= since) return false;
    for (auto& [id, g] : t.groups) {
      if (g.members.empty() || g.onset + kOnsetIntervals < chunk.hotSince || chunk.hotSince + kOnsetIntervals < g.onset) continue;
      if (id == chunk.group) return true;  // where it belongs already
      if (auto old = t.groups.find(chunk.group); old != t.groups.end()) std::erase(old->second.members, c);
      g.members.insert(std::upper_bound(g.members.begin(), g.members.end(), c), c);
      chunk.group = id;
      return true;
    }
    return false;
  });
}

// A group is active while half its chunks are hot; becoming active for kOnsetIntervals in a row is
// its onset, dated to the first: a coarse region that holds the memory of the phase beginning
// and the next one's reads hot for an interval before the profiler splits it, and that is no
// phase of the next one.
void PhasePredictor::updateActivity(Target& t, uint64_t interval) {
  for (auto& [id, g] : t.groups) {
    size_t hot = 0;
    for (uint64_t c : g.members)
      if (auto it = t.chunks.find(c); it != t.chunks.end() && it->second.hot) ++hot;
    const bool active = !g.members.empty() && hot * 2 >= g.members.size();
    if (active != g.active) MTM_DEBUG("predict group={} {} hot_chunks={}/{}", id, active ? "active" : "inactive", hot, g.members.size());
    if (active && !g.active) g.activeSince = interval;
    if (!active) g.predictedEpisode = false;
    // >=: a policy may not be shown every interval.
    if (active && interval + 1 >= g.activeSince + kOnsetIntervals && g.onset < g.activeSince) onset(t, id, g.activeSince);
    g.active = active;
    if (active) g.lastActive = interval;
  }
}

void PhasePredictor::onset(Target& t, uint32_t group, uint64_t interval) {
  if (auto g = t.groups.find(group); g != t.groups.end()) g->second.onset = interval;
  auto& seq = t.onsets;
  auto at = std::upper_bound(seq.begin(), seq.end(), std::pair(interval, UINT32_MAX));
  if (at == seq.begin() && !seq.empty()) {
    if (!dropOnsetsInside(t, group)) return;  // older than what is known
    at = std::upper_bound(seq.begin(), seq.end(), std::pair(interval, UINT32_MAX));
  }
  // The phase it belongs to: its own interval's, or that of an onset a moment before, within a
  // quarter of that group's usual episode. A few chunks of a phase's memory that read hot a few
  // intervals early (a region straddling the phase before) do not stand between the two (seen
  // in the VM lab: 3 chunks of C, hot 4 intervals before the other 29, became B's successor in
  // C's place, and when they did not read hot early in the third cycle, C was not predicted).
  // Likewise a late onset a moment before the next phase's, within a quarter of its own usual
  // episode, is of that phase (seen in the VM lab: C, learned late, began one interval before
  // two small groups of its memory, and C -> A was never learned).
  uint64_t phaseAt = interval;
  if (at != seq.begin()) {
    const auto [when, prev] = *std::prev(at);
    const auto g = t.groups.find(prev);
    if (when < interval && prev != group && g != t.groups.end() && g->second.durations > 0 &&
        double(interval - when) < kEpisodeShare * g->second.duration)
      phaseAt = when;
  }
  if (const auto self = t.groups.find(group); phaseAt == interval && at != seq.end() && self != t.groups.end() &&
                                              self->second.durations > 0 &&
                                              double(at->first - interval) < kEpisodeShare * self->second.duration) {
    phaseAt = at->first;
    at = std::upper_bound(at, seq.end(), std::pair(phaseAt, UINT32_MAX));
  }
  const bool latest = at == seq.end();
  // The groups that began in that phase, the phase before (the groups of the onset before:
  // several when they began together, which share one sighting of what follows) and, for a late
  // onset, the phase after; copies, as the sequence changes below.
  const auto phase = std::lower_bound(seq.begin(), at, std::pair(phaseAt, 0u));
  const bool joins = phase != at;
  const uint64_t beforeAt = phase == seq.begin() ? 0 : std::prev(phase)->first;
  const std::vector<std::pair<uint64_t, uint32_t>> before(std::lower_bound(seq.begin(), phase, std::pair(beforeAt, 0u)), phase);
  const std::vector<std::pair<uint64_t, uint32_t>> after(at,
                                                         latest ? at : std::upper_bound(at, seq.end(), std::pair(at->first, UINT32_MAX)));
  const double share = before.empty() ? 0 : 1.0 / double(before.size());
  if (std::find(phase, at, std::pair(phaseAt, group)) != at) {
    // known already
  } else if (!joins && before.size() == 1 && before.front().second == group) {
    // The same group again links nothing: the latest one's onset moves (the next lag counts
    // from its latest start).
    if (latest) std::prev(at)->first = interval;
  } else {
    // A late onset (a group learned when it cooled, after the next phase had begun): what was
    // learned as before -> after was before -> group -> after. One that joins a phase known
    // already adds its own links only.
    for (const auto& [when, next] : after) {
      if (!joins)
        for (const auto& [_, prev] : before)
          if (prev != next) unlearn(t, prev, next, share);
      if (next != group) learn(t, group, next, when - phaseAt, 1, when);
    }
    for (const auto& [when, prev] : before) {
      if (prev == group) continue;
      MTM_DEBUG("predict onset group={} interval={} after group={} lag={}{}{}{}", group, interval, prev, interval - when,
                joins ? " (with others)" : "", latest ? "" : " (late)", phaseAt < interval ? " (the phase began earlier)" : "");
      learn(t, prev, group, interval - when, share, phaseAt);
    }
    seq.insert(std::upper_bound(seq.begin(), seq.end(), std::pair(phaseAt, UINT32_MAX)), {phaseAt, group});
    if (seq.size() > kRecentOnsets) seq.erase(seq.begin());
  }
  for (auto p = t.pending.begin(); p != t.pending.end();)
    if (p->group == group) {
      ++hits_;
      MTM_DEBUG("predict hit group={} expected={} onset={}", group, p->expected, interval);
      if (auto from = t.groups.find(p->from); from != t.groups.end()) from->second.missedSinceHit = false;
      if (auto g = t.groups.find(group); g != t.groups.end()) g->second.predictedEpisode = true;
      p = t.pending.erase(p);
    } else {
      ++p;
    }
  if (t.hintedPhase >= 0 && latest) {  // the hinted phase is now's: a late onset may be of one before
    auto& groups = t.phaseGroups[static_cast<uint32_t>(t.hintedPhase)];
    if (groups.size() < limits_.groupsPerHintedPhase && std::find(groups.begin(), groups.end(), group) == groups.end())
      groups.push_back(group);
  }
}

bool PhasePredictor::dropOnsetsInside(Target& t, uint32_t group) {
  auto& seq = t.onsets;
  const auto ended = [&](uint32_t id) {
    const auto g = t.groups.find(id);
    return id != group && (g == t.groups.end() || (!g->second.active && g->second.lastActive < now_));
  };
  // Only a run from the oldest on: one that ended among ones that run on is a phase of its own.
  const auto inside = std::find_if_not(seq.begin(), seq.end(), [&](const auto& o) { return ended(o.second); });
  if (inside == seq.begin()) return false;
  if (std::any_of(inside, seq.end(), [&](const auto& o) { return ended(o.second); })) return false;
  // The start-up's order is no phase order: what its pieces learned of each other goes.
  for (auto from = seq.begin(); from != inside;) {
    const auto to = std::upper_bound(from, inside, std::pair(from->first, UINT32_MAX));
    const auto toEnd = to == inside ? inside : std::upper_bound(to, inside, std::pair(to->first, UINT32_MAX));
    const double share = 1.0 / double(to - from);
    for (auto a = from; a != to; ++a)
      for (auto b = to; b != toEnd; ++b) unlearn(t, a->second, b->second, share);
    from = to;
  }
  MTM_DEBUG("predict group={} began before the {} onset(s) of groups that ended inside its episode: they give it their place", group,
            inside - seq.begin());
  seq.erase(seq.begin(), inside);
  return true;
}

void PhasePredictor::learn(Target& t, uint32_t from, uint32_t to, uint64_t lagIntervals, double weight, uint64_t seen) {
  auto prev = t.groups.find(from);
  if (prev == t.groups.end()) return;
  auto& next = prev->second.successors;
  const double lag = double(lagIntervals);
  auto s = std::find_if(next.begin(), next.end(), [&](const Successor& x) { return x.group == to; });
  if (s == next.end()) {
    if (next.size() >= limits_.successorsPerGroup)
      next.erase(std::min_element(next.begin(), next.end(), [](const auto& a, const auto& b) { return a.weight < b.weight; }));
    next.push_back({to, 0, lag});
    s = next.end() - 1;
  }
  s->weight += weight;
  if (s->sightings == 0 || s->seen != seen) ++s->sightings;
  s->seen = seen;
  const double n = std::clamp(s->weight, 1.0, kLagSmoothing);
  s->lagDev += (std::abs(lag - s->lagMean) - s->lagDev) / n;
  s->lagMean += (lag - s->lagMean) / n;
}

void PhasePredictor::unlearn(Target& t, uint32_t from, uint32_t to, double weight) {
  auto prev = t.groups.find(from);
  if (prev == t.groups.end()) return;
  auto& next = prev->second.successors;
  auto s = std::find_if(next.begin(), next.end(), [&](const Successor& x) { return x.group == to; });
  if (s == next.end()) return;
  s->weight -= weight;
  if (s->weight <= 1e-9) next.erase(s);
}

void PhasePredictor::expect(Target& t, uint32_t group, uint64_t expected, uint64_t patience, uint32_t from) {
  const auto g = t.groups.find(group);
  if (g == t.groups.end() || g->second.active) return;
  if (std::any_of(t.pending.begin(), t.pending.end(), [&](const Pending& p) { return p.group == group; })) return;
  t.pending.push_back({group, expected, expected + patience, from});
  MTM_DEBUG("predict group={} expected={} give_up={} from={} chunks={} top_room_mib={} swap_fits={} cooling_lead={}", group, expected,
            expected + patience, from, g->second.members.size(), t.topRoom == UINT64_MAX ? -1 : int64_t(t.topRoom >> 20), swapFits(t),
            coolingLead(t));
  ++predictionsMade_;
  predictedBytes_ += bytesOf(g->second);
}

Status PhasePredictor::hint(const Hint& h) {
  Target& t = targets_[h.pid];
  const uint64_t next = now_ + 1;
  if (h.phase) {
    if (t.phaseGroups.size() >= limits_.hintedPhasesPerTarget && !t.phaseGroups.count(h.number)) t.phaseGroups.erase(t.phaseGroups.begin());
    t.hintedPhase = h.number;
    for (uint32_t g : t.phaseGroups[h.number]) expect(t, g, next, std::max(kHintPatience, horizon_), 0);
    return {};
  }
  std::vector<uint64_t> chunks;
  for (const auto& r : h.ranges)
    for (uint64_t c = r.start / kChunkBytes; c * kChunkBytes < r.end; ++c) {
      if (chunks.size() > limits_.chunksPerTarget)
        return Error("the ranges span more than " + std::to_string(limits_.chunksPerTarget) + " chunks of 2 MiB, all a process may have");
      chunks.push_back(c);
    }
  std::sort(chunks.begin(), chunks.end());
  chunks.erase(std::unique(chunks.begin(), chunks.end()), chunks.end());
  size_t fresh = 0;
  for (uint64_t c : chunks) fresh += t.chunks.count(c) ? 0 : 1;
  if (t.chunks.size() + fresh > limits_.chunksPerTarget)
    return Error("the ranges add " + std::to_string(fresh) + " chunks of 2 MiB to the " + std::to_string(t.chunks.size()) +
                 " followed for this process; at most " + std::to_string(limits_.chunksPerTarget) + " are");
  if (t.groups.size() >= limits_.groupsPerTarget)
    return Error("this process has " + std::to_string(t.groups.size()) + " groups, the most it may");
  const uint32_t id = t.nextGroup++;
  Group& g = t.groups[id];
  g.lastActive = next;
  g.hotness = std::min(1.0, hotThreshold_ + kHintedLift * (1 - hotThreshold_));
  g.confidence = kHintedConfidence;
  for (uint64_t c : chunks) {
    Chunk& chunk = t.chunks[c];
    if (chunk.group != 0 && chunk.group != id)
      if (auto old = t.groups.find(chunk.group); old != t.groups.end()) std::erase(old->second.members, c);
    chunk.group = id;
  }
  g.members = std::move(chunks);
  return {};
}

void PhasePredictor::predict(int pid, Target& t, uint64_t interval) {
  // Predictions whose group did not come in time: their bytes were moved for nothing, and the
  // transition that made them weighs half as much.
  for (auto p = t.pending.begin(); p != t.pending.end();) {
    auto g = t.groups.find(p->group);
    if (g == t.groups.end()) {  // forgotten meanwhile: neither hit nor miss
      p = t.pending.erase(p);
      continue;
    }
    if (interval <= p->giveUp) {
      ++p;
      continue;
    }
    ++misses_;
    mispredictedBytes_ += bytesOf(g->second);
    MTM_DEBUG("predict miss group={} expected={} from={}", p->group, p->expected, p->from);
    if (auto from = t.groups.find(p->from); from != t.groups.end()) {
      from->second.missedSinceHit = true;
      for (auto& s : from->second.successors)
        if (s.group == p->group) s.weight /= 2;
    }
    p = t.pending.erase(p);
  }
  // From the latest phase, its largest group's transitions (a few chunks of noise that began with
  // it have a clean record of one).
  const Group* last = nullptr;
  uint32_t lastGroup = 0;
  const uint64_t lastOnset = t.onsets.empty() ? 0 : t.onsets.back().first;
  std::vector<uint32_t> latestPhase;
  uint64_t phaseBefore = 0;  // the onset of the phase before it (0: none)
  for (auto e = t.onsets.rbegin(); e != t.onsets.rend(); ++e) {
    if (e->first < lastOnset) {
      phaseBefore = e->first;
      break;
    }
    latestPhase.push_back(e->second);
    if (auto g = t.groups.find(e->second); g != t.groups.end() && (!last || g->second.members.size() > last->members.size())) {
      last = &g->second;
      lastGroup = e->second;
    }
  }
  if (last) {
    std::optional<bool> known;
    for (const Successor* s : confidentSuccessors(t, *last)) {
      const uint64_t expected = lastOnset + static_cast<uint64_t>(std::llround(s->lagMean));
      const auto spread = static_cast<uint64_t>(std::llround(2 * s->lagDev));
      if (interval + horizon_ + spread < expected || interval > expected + spread) continue;
      if (!known) known = knowsPhase(t, latestPhase, phaseBefore);  // a walk over the chunks: only when a prediction is due
      if (*known) expect(t, s->group, expected, std::max(kMinPatience, static_cast<uint64_t>(s->lagMean / 2)) + spread, lastGroup);
    }
  }
  const uint64_t lead = coolingLead(t);
  for (const Pending& p : t.pending) {
    // The group before it ends by then, as its episodes usually do: predicted to cool from `lead`
    // intervals before its expected end -- not before: memory still read that goes down early
    // loses its accesses for as long as it is early, and a phase that outlasts the prediction
    // keeps its memory until then.
    if (auto from = t.groups.find(p.from);
        from != t.groups.end() && from->second.active && from->second.durations > 0 && endsWithin(from->second, interval, p.giveUp, lead))
      for (uint64_t c : from->second.members)
        if (auto it = t.chunks.find(c); it != t.chunks.end() && it->second.hot) appendRun(coolings_, pid, c, 0, 0, false);
    predictUnseen(pid, t, t.groups.at(p.group), true);
  }
  keepFollowers(pid, t);
  // A group whose episode began: its members not seen hot yet -- moved up ahead of it, or not
  // yet found by the checks -- count as hot until the horizon before its usual end, so that
  // memory moved up for it is not taken for the coldest there the moment the prediction is
  // met, and the rest of the group follows the part seen first. Only for an episode predicted,
  // or a group with two episodes behind it: one founded from a phase's memory as it cooled, half
  // of it hot again in a phase that does not recur, is no group coming back (VM lab, random
  // phases between recurring ones: 14 MiB of such a group moved up, 7 of its 20 chunks).
  for (const auto& [id, g] : t.groups)
    if (g.active && (g.predictedEpisode || g.durations >= 2) && double(interval + horizon_) < double(g.onset) + g.duration)
      predictUnseen(pid, t, g, false);
}

std::vector<const PhasePredictor::Successor*> PhasePredictor::confidentSuccessors(const Target& t, const Group& g) const {
  std::map<uint64_t, double> phases;
  for (const auto& s : g.successors) phases[s.seen] = std::max(phases[s.seen], s.weight);
  double total = 0;
  for (const auto& [_, weight] : phases) total += weight;
  std::vector<const Successor*> out;
  for (const auto& s : g.successors)
    if (s.weight >= minConfidence_ * total && t.groups.count(s.group) && (!g.missedSinceHit || s.sightings >= 2)) out.push_back(&s);
  return out;
}

void PhasePredictor::keepFollowers(int pid, const Target& t) {
  std::vector<uint32_t> reached;
  if (swapFits(t))
    for (const Pending& p : t.pending) reached.push_back(p.group);
  for (size_t i = 0; i < reached.size(); ++i) {  // each group once: links may close a cycle
    for (const Successor* s : confidentSuccessors(t, t.groups.at(reached[i]))) {
      const Group& next = t.groups.at(s->group);
      if (next.active || std::find(reached.begin(), reached.end(), s->group) != reached.end()) continue;
      reached.push_back(s->group);
      for (uint64_t c : next.members) appendRun(keeps_, pid, c, next.hotness, next.confidence, false);
    }
  }
}

bool PhasePredictor::knowsPhase(const Target& t, const std::vector<uint32_t>& phase, uint64_t phaseBefore) {
  uint64_t begun = 0, known = 0;
  for (const auto& [_, chunk] : t.chunks) {
    if (!chunk.hot || (phaseBefore != 0 && chunk.hotSince <= phaseBefore)) continue;
    ++begun;
    known += chunk.group != 0 && std::find(phase.begin(), phase.end(), chunk.group) != phase.end();
  }
  return begun == 0 || 2 * known > begun;  // nothing begun since (an idle gap): nothing says otherwise
}

void PhasePredictor::predictUnseen(int pid, const Target& t, const Group& g, bool ahead) {
  for (uint64_t c : g.members) {
    if (auto it = t.chunks.find(c); it != t.chunks.end() && it->second.hot) continue;  // hot already: the plan has it
    appendRun(predictions_, pid, c, g.hotness, g.confidence, ahead);
  }
}

bool PhasePredictor::endsWithin(const Group& g, uint64_t interval, uint64_t giveUp, uint64_t lead) const {
  const double end = double(g.onset) + g.duration;
  return end <= double(giveUp) && double(interval + lead) >= end;
}

uint64_t PhasePredictor::predictedBytes(const Target& t) const {
  uint64_t bytes = 0;
  for (const Pending& p : t.pending)
    if (auto g = t.groups.find(p.group); g != t.groups.end()) bytes += bytesOf(g->second);
  return bytes;
}

uint64_t PhasePredictor::coolingLead(const Target& t) const {
  // A swap straddles the phase's end, half before and half after: a byte of either set off the
  // top tier costs the same, and a swap that ends at the boundary loses twice what a centred one
  // does (VM lab: swaps of 1.3 s that ended with the phase left the set in use gone 0.5-1.5 s
  // early, every other phase).
  if (swapFits(t)) return (swapIntervals(t) + 1) / 2 + 1;
  return std::min(horizon_, static_cast<uint64_t>(std::ceil(double(predictedBytes(t)) / bytesPerInterval_)) + 1);
}

uint64_t PhasePredictor::swapIntervals(const Target& t) const {
  const double rate = measuredBytesPerInterval_ > 0 ? measuredBytesPerInterval_ : bytesPerInterval_;
  return static_cast<uint64_t>(std::ceil(2.0 * double(predictedBytes(t)) / rate));
}

// Chunks not hot for a long time leave their groups; empty groups and links to them go.
void PhasePredictor::forgetStale(Target& t, uint64_t interval) {
  if (interval % 64 != 0) return;
  for (auto it = t.chunks.begin(); it != t.chunks.end();) {
    if (it->second.hot || interval - it->second.lastHot < kForgetAfter) {
      ++it;
      continue;
    }
    if (auto g = t.groups.find(it->second.group); g != t.groups.end()) {
      auto& m = g->second.members;
      m.erase(std::remove(m.begin(), m.end(), it->first), m.end());
    }
    it = t.chunks.erase(it);
  }
  dropGroups(t, [](uint32_t, const Group& g) { return g.members.empty(); });
}

void PhasePredictor::dropGroups(Target& t, const std::function<bool(uint32_t id, const Group&)>& gone) {
  const size_t before = t.groups.size();
  for (auto it = t.groups.begin(); it != t.groups.end();) {
    if (!gone(it->first, it->second)) {
      ++it;
      continue;
    }
    for (uint64_t c : it->second.members)
      if (auto chunk = t.chunks.find(c); chunk != t.chunks.end()) chunk->second.group = 0;
    MTM_DEBUG("predict group={} dropped members={}", it->first, it->second.members.size());
    it = t.groups.erase(it);
  }
  if (t.groups.size() == before) return;
  auto known = [&](uint32_t g) { return t.groups.count(g) != 0; };
  for (auto& [id, g] : t.groups) std::erase_if(g.successors, [&](const Successor& s) { return !known(s.group); });
  std::erase_if(t.pending, [&](const Pending& p) { return !known(p.group); });
  std::erase_if(t.onsets, [&](const auto& o) { return !known(o.second); });
  for (auto& [phase, groups] : t.phaseGroups) std::erase_if(groups, [&](uint32_t g) { return !known(g); });
}

PhasePredictor::Stats PhasePredictor::stats() const {
  Stats s;
  for (const auto& [pid, t] : targets_) {
    s.groups += t.groups.size();
    for (const auto& [id, g] : t.groups) {
      s.transitions += g.successors.size();
      s.activeGroups += g.active ? 1 : 0;
    }
  }
  s.predictions = predictionsMade_;
  s.hits = hits_;
  s.misses = misses_;
  s.predictedBytes = predictedBytes_;
  s.mispredictedBytes = mispredictedBytes_;
  return s;
}

size_t PhasePredictor::entries() const {
  size_t n = 0;
  for (const auto& [pid, t] : targets_) {
    n += t.chunks.size() + t.pending.size() + t.onsets.size();
    for (const auto& [phase, groups] : t.phaseGroups) n += 1 + groups.size();
    for (const auto& [id, g] : t.groups) n += 1 + g.members.size() + g.successors.size();
  }
  return n;
}

}  // namespace mtm::policy
