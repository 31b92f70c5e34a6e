#include "mtm/profiler/Regions.h"

#include <algorithm>
#include <cmath>

#include "mtm/Log.h"

namespace mtm::profiler {
namespace {

// The first cut of the address space: pieces on 2 MiB boundaries, as small as 2 MiB while half
// of max_regions suffices, larger for larger processes. Splits and merges take it from there.
uint64_t initialPiece(const std::vector<Vma>& vmas, uint32_t maxRegions) {
  uint64_t total = 0;
  for (const auto& v : vmas)
    if (profiled(v)) total += v.end - v.start;
  const uint64_t pieces = std::max<uint64_t>(1, maxRegions / 2);
  const uint64_t piece = (total / pieces + kHuge - 1) & ~(kHuge - 1);
  return std::max(kHuge, piece);
}

}  // namespace

uint64_t Region::mid() const {
  const uint64_t align = huge ? kHuge : kPage;
  uint64_t m = (start + size() / 2) & ~(align - 1);
  if (m <= start || m >= end) {
    m = (start + size() / 2) & ~(kPage - 1);
  }
  return m;
}

bool profiled(const Vma& v) {
  if (v.path == "[vsyscall]" || v.path == "[vvar]" || v.path == "[vdso]" || v.path == "[vvar_vclock]") return false;
  if (v.hugetlb()) return false;  // hugetlb pages have no accessed bits of their own to read
  const bool writable = v.perms.size() >= 2 && v.perms[1] == 'w';
  const bool priv = v.perms.size() >= 4 && v.perms[3] == 'p';
  return writable && priv;
}

void RegionSet::rebuild(const std::vector<Vma>& vmas) {
  // Regions that survive keep their shape and history (clipped to their VMA); memory no region
  // covers yet is cut into fresh pieces.
  const uint64_t piece = initialPiece(vmas, config_.maxRegions);
  std::vector<Region> next;
  size_t old = 0;
  for (const auto& v : vmas) {
    if (!profiled(v)) continue;
    uint64_t cursor = v.start;
    auto fresh = [&](uint64_t upTo) {
      while (cursor < upTo) {
        Region r;
        r.start = cursor;
        r.end = std::min(upTo, (cursor + piece) & ~(kHuge - 1));
        if (r.end <= r.start) r.end = upTo;
        next.push_back(r);
        cursor = r.end;
      }
    };
    while (old < regions_.size() && regions_[old].end <= v.start) ++old;
    for (size_t i = old; i < regions_.size() && regions_[i].start < v.end; ++i) {
      Region r = regions_[i];
      r.start = std::max(r.start, v.start);
      r.end = std::min(r.end, v.end);
      if (r.start < cursor) r.start = cursor;
      if (r.start >= r.end) continue;
      fresh(r.start);
      next.push_back(r);
      cursor = r.end;
    }
    fresh(v.end);
  }
  regions_ = std::move(next);
}

Region* RegionSet::find(uint64_t addr) {
  auto it = std::upper_bound(regions_.begin(), regions_.end(), addr, [](uint64_t a, const Region& r) { return a < r.start; });
  if (it == regions_.begin()) return nullptr;
  --it;
  return addr < it->end ? &*it : nullptr;
}

void RegionSet::observe(uint64_t addr, bool accessed, int node, Mapping mapping) {
  Region* r = find(addr);
  if (!r) return;
  const int half = addr >= r->mid() ? 1 : 0;
  ++r->checked[half];
  if (accessed) ++r->accessed[half];
  r->samples.push_back({addr, accessed});
  if (node >= 0) ++r->nodeVotes[node];
  if (mapping == Mapping::pmd) {
    r->huge = true;
    ++r->sawPmd;
  } else if (mapping == Mapping::pte) {
    ++r->sawPte;
  } else if (mapping == Mapping::fault) {
    ++r->faults;
  }
  if (accessed && mapping == Mapping::exact) r->eighths[static_cast<size_t>((addr - r->start) * 8 / r->size())] += 1;
}

namespace {

// How unevenly a region's eighths were accessed: 1 - the share of eighths with at least half
// the mean count. Even access: 0; all in one eighth: 0.875.
void updateSkew(Region& r, double decay) {
  double total = 0;
  for (double e : r.eighths) total += e;
  r.skew = -1;
  r.hotEighths = 0;
  if (r.huge && total >= RegionSet::kSkewSamples) {
    int covered = 0;
    for (size_t i = 0; i < 8; ++i) {
      if (r.eighths[i] >= total / 16) {
        ++covered;
        r.hotEighths |= static_cast<uint8_t>(1u << i);
      }
    }
    r.skew = 1 - covered / 8.0;
  }
  for (double& e : r.eighths) e *= decay;
}

// A region's checks of this interval, grouped by granule (a cut falls between granules only).
struct Unit {
  uint64_t start = 0;
  uint32_t checks = 0, accessed = 0;
};

// The run of units [first, last) that stands out most from its region: the stretch with the
// largest surplus of accessed checks over mean + margin, or deficit under mean - margin (maximum
// subarray). One cut separates a hot end; a hot run in the middle needs two, which no single cut
// finds when the run is small beside its cold surroundings. The margin keeps two hot runs and the
// cold gap between them from counting as one lukewarm run.
std::pair<size_t, size_t> standoutRun(const std::vector<Unit>& units, double mean, double margin) {
  size_t bestFirst = 0, bestLast = 0;
  double best = 0;
  for (double sign : {1.0, -1.0}) {
    const double level = mean + sign * margin;
    double sum = 0;
    size_t first = 0;
    for (size_t i = 0; i < units.size(); ++i) {
      if (sum <= 0) {
        sum = 0;
        first = i;
      }
      sum += sign * (units[i].accessed - level * units[i].checks);
      if (sum > best + 1e-9) {
        best = sum;
        bestFirst = first;
        bestLast = i + 1;
      }
    }
  }
  return {bestFirst, bestLast};
}

// A region that took a new shape: what its eighths saw no longer lines up.
void reshaped(Region& r) {
  r.eighths = {};
  r.skew = -1;
  r.hotEighths = 0;
}

// [start, end) of `r` as a region of its own: its history, with the confidence of its share of
// the checks, and new (age 0).
Region pieceOf(const Region& r, uint64_t start, uint64_t end) {
  Region piece = r;
  piece.start = start;
  piece.end = end;
  piece.age = 0;
  piece.confidence = r.confidence * double(piece.size()) / double(r.size());
  piece.history = r.history.share(double(piece.size()) / double(r.size()));
  reshaped(piece);
  return piece;
}

}  // namespace

bool RegionSet::cutAt(uint64_t addr) {
  Region* r = find(addr);
  if (r == nullptr || addr == r->start || addr % kPage != 0 || (r->huge && addr % kHuge != 0) || regions_.size() >= config_.maxRegions)
    return false;
  Region tail = pieceOf(*r, addr, r->end);
  *r = pieceOf(*r, r->start, addr);
  regions_.insert(regions_.begin() + (r - regions_.data()) + 1, std::move(tail));
  return true;
}

void RegionSet::noteNode(uint64_t start, uint64_t end, int node) {
  cutAt(start);
  cutAt(end);
  auto r = std::upper_bound(regions_.begin(), regions_.end(), start, [](uint64_t a, const Region& x) { return a < x.end; });
  for (; r != regions_.end() && r->start < end; ++r) {
    if (2 * (std::min(end, r->end) - std::max(start, r->start)) < r->size()) continue;
    r->node = node;
    r->nodeVotes.clear();
  }
}

void RegionSet::observeRange(uint64_t start, uint64_t end, double fraction) {
  const auto accessed = static_cast<uint32_t>(std::lround(fraction * kRangeWeight));
  for (auto& r : regions_) {
    if (r.end <= start || r.start >= end) continue;
    for (int half = 0; half < 2; ++half) {
      const uint64_t lo = half ? r.mid() : r.start, hi = half ? r.end : r.mid();
      if (std::max(lo, start) >= std::min(hi, end)) continue;
      r.checked[half] += kRangeWeight;
      r.accessed[half] += accessed;
    }
  }
}

uint64_t RegionSet::bytes() const {
  uint64_t n = 0;
  for (const auto& r : regions_) n += r.size();
  return n;
}

RegionStats RegionSet::endInterval() {
  const double decay = config_.hotnessDecay;
  RegionStats stats;
  // A process none of whose checks found an access was likely not running in the window (blocked
  // on pages being moved, stopped, descheduled): its misses do not say where access went, so they
  // build no run of the change test. The decayed mean still takes them.
  const bool ran = std::any_of(regions_.begin(), regions_.end(), [](const Region& r) { return r.accessed[0] + r.accessed[1] > 0; });
  for (auto& r : regions_) {
    const uint32_t checked = r.checked[0] + r.checked[1];
    ++r.age;
    // Faults come where memory was just allocated or moved -- a burst on the pages a move
    // catches in use -- not where checks fall: they feed the decayed mean, never a change's run.
    const uint32_t sampled = checked - r.faults, sampledAccessed = r.accessed[0] + r.accessed[1] - r.faults;
    const bool changed = ran ? r.history.note(sampled, sampledAccessed) : r.history.note(0, 0);
    if (checked > 0) {
      const double frac = double(r.accessed[0] + r.accessed[1]) / checked;
      const double temporal = std::fabs(frac - r.lastFraction);
      // Spatial: how much the two halves disagree; where one half saw nothing, the spread of
      // the checks themselves (a mixed region).
      double spatial = std::sqrt(frac * (1 - frac));
      if (r.checked[0] && r.checked[1])
        spatial = std::max(spatial, std::fabs(double(r.accessed[0]) / r.checked[0] - double(r.accessed[1]) / r.checked[1]));
      r.variation = spatial + temporal;
      r.lastFraction = frac;
      if (changed) {
        r.hotness = r.history.runAccessed ? 1 : 0;
        r.confidence = r.history.run;
        ++stats.changes;
        MTM_DEBUG("profiler change region={:#x}-{:#x} to={} run={}", r.start, r.end, r.history.runAccessed ? "hot" : "cold", r.history.run);
      } else {
        r.hotness = r.confidence > 0 ? decay * r.hotness + (1 - decay) * frac : frac;
        r.confidence = decay * r.confidence + checked;
      }
    } else {
      r.confidence *= decay;
    }
    // Split since (by mtm or the kernel): only 4 KiB PTEs for kPteOnlyIntervals intervals in a
    // row. One interval is not enough: a region checked once or twice an interval may have a few
    // 4 KiB pages beside its THPs, and flapping between the two costs its 2 MiB granule.
    r.pteOnlyIntervals = r.sawPmd > 0 ? 0 : r.pteOnlyIntervals + (r.sawPte > 0 ? 1 : 0);
    if (r.pteOnlyIntervals >= kPteOnlyIntervals) r.huge = false;
    updateSkew(r, decay);
    if (!r.nodeVotes.empty()) {
      r.node = std::max_element(r.nodeVotes.begin(), r.nodeVotes.end(), [](auto& a, auto& b) { return a.second < b.second; })->first;
    }
  }
  splitAndMerge(stats);
  for (auto& r : regions_) {
    r.checked[0] = r.checked[1] = r.accessed[0] = r.accessed[1] = 0;
    r.nodeVotes.clear();
    r.samples.clear();
    r.sawPmd = r.sawPte = r.faults = 0;
  }
  return stats;
}

void RegionSet::split(Region r, std::vector<Region>& out, RegionStats& stats, size_t budget) {
  const uint64_t granule = r.huge ? kHuge : std::max<uint64_t>(config_.minRegionBytes, kPage);
  auto& smp = r.samples;
  if (budget == 0 || r.size() < 2 * granule || smp.size() < 2) {
    out.push_back(std::move(r));
    return;
  }
  std::sort(smp.begin(), smp.end());
  std::vector<Unit> units;
  uint32_t checks = 0, accessed = 0;
  for (const auto& [addr, hit] : smp) {
    const uint64_t g = std::max(addr & ~(granule - 1), r.start);
    if (units.empty() || units.back().start != g) units.push_back({g});
    ++units.back().checks;
    units.back().accessed += hit;
    ++checks;
    accessed += hit;
  }
  const double mean = double(accessed) / checks;
  const auto [first, last] = standoutRun(units, mean, config_.splitVariation);
  if (last == 0 || (first == 0 && last == units.size())) {
    out.push_back(std::move(r));
    return;
  }
  uint32_t inChecks = 0, inAccessed = 0;
  for (size_t i = first; i < last; ++i) {
    inChecks += units[i].checks;
    inAccessed += units[i].accessed;
  }
  const double inside = double(inAccessed) / inChecks;
  const double outside = double(accessed - inAccessed) / double(checks - inChecks);
  // A run all accessed against a rest all idle (or the reverse) is a boundary however few checks
  // show it; a mixed one must stand out by a two-proportion z score: a lone accessed check among
  // many that alternate is chance.
  const bool pure = (inside == 0 || inside == 1) && outside == 1 - inside;
  const double z = std::fabs(inside - outside) / std::sqrt(mean * (1 - mean) * (1.0 / inChecks + 1.0 / double(checks - inChecks)));
  if (std::fabs(inside - outside) <= config_.splitVariation || (!pure && z < kSplitScore)) {
    out.push_back(std::move(r));
    return;
  }
  std::vector<uint64_t> cuts{r.start};
  if (first > 0) cuts.push_back(units[first].start);
  if (last < units.size()) cuts.push_back(units[last].start);
  cuts.push_back(r.end);
  const auto all = std::move(r.samples);  // sorted by address: each part takes a stretch
  auto from = all.begin();
  for (size_t k = 0; k + 1 < cuts.size(); ++k) {
    Region part = pieceOf(r, cuts[k], cuts[k + 1]);
    const auto to = std::lower_bound(from, all.end(), std::make_pair(part.end, false));
    part.samples.assign(from, to);
    from = to;
    size_t acc = 0;
    for (const auto& s : part.samples) acc += s.second;
    part.hotness = part.lastFraction = double(acc) / double(part.samples.size());
    split(std::move(part), out, stats, budget - 1);
  }
  stats.splits += static_cast<uint32_t>(cuts.size() - 2);
}

void RegionSet::splitAndMerge(RegionStats& stats) {
  std::vector<Region> out;
  out.reserve(regions_.size() * 2);
  const uint64_t minSize = std::max<uint64_t>(config_.minRegionBytes, kPage);
  for (auto& r : regions_) {
    const size_t room = config_.maxRegions > regions_.size() + stats.splits ? config_.maxRegions - regions_.size() - stats.splits : 0;
    if (!r.samples.empty()) {
      // Checks with addresses: cut where they separate best, as often as they say.
      split(std::move(r), out, stats, std::min<size_t>(room, 16));
      continue;
    }
    // Range observations (DAMON): halves only.
    const uint64_t granule = r.huge ? kHuge : minSize;
    const uint32_t checked = r.checked[0] + r.checked[1];
    if (r.size() >= 2 * granule && room > 0 && r.checked[0] && r.checked[1]) {
      const double lo = double(r.accessed[0]) / r.checked[0], hi = double(r.accessed[1]) / r.checked[1];
      if (std::fabs(lo - hi) > config_.splitVariation && checked >= 2) {
        const uint64_t m = r.mid();
        Region a = r, b = r;
        a.end = m;
        b.start = m;
        a.hotness = a.lastFraction = lo;
        b.hotness = b.lastFraction = hi;
        a.age = b.age = 0;
        a.confidence = b.confidence = r.confidence / 2;
        a.history = b.history = r.history.share(0.5);
        reshaped(a);
        reshaped(b);
        out.push_back(a);
        out.push_back(b);
        ++stats.splits;
        continue;
      }
    }
    out.push_back(r);
  }
  // Merge: adjacent, contiguous, both settled (age >= 2), hotness closer than merge_difference,
  // and on the same node as far as the checks tell: a region's placement stays one place, so a
  // policy moving it moves what it meant to. A region whose node no check has found yet merges
  // only with another such: merged into a neighbour on a known node, its pages (still where they
  // were first put) hid in a region that read as on top, and one check on them later took the
  // whole region's reading down (VM lab: 58 MiB on node 0 read as tier 3 and was moved again).
  std::vector<Region> merged;
  merged.reserve(out.size());
  for (auto& r : out) {
    if (!merged.empty()) {
      Region& p = merged.back();
      if (p.end == r.start && p.age >= 2 && r.age >= 2 && p.huge == r.huge && p.node == r.node &&
          std::fabs(p.hotness - r.hotness) < config_.mergeDifference &&
          std::fabs(p.lastFraction - r.lastFraction) < config_.mergeDifference) {
        const double wp = double(p.size()), wr = double(r.size());
        p.hotness = (p.hotness * wp + r.hotness * wr) / (wp + wr);
        p.lastFraction = (p.lastFraction * wp + r.lastFraction * wr) / (wp + wr);
        p.confidence += r.confidence;
        p.history.absorb(r.history);
        p.variation = std::max(p.variation, r.variation);
        p.end = r.end;
        p.age = 0;
        reshaped(p);
        ++stats.merges;
        continue;
      }
    }
    merged.push_back(r);
  }
  regions_ = std::move(merged);
}

}  // namespace mtm::profiler
