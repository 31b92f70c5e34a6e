#include "HotSetScore.h"

#include <time.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <fstream>

namespace mtm::bench {

void HotSetTruth::update(const std::string& truthFile) {
  std::ifstream in(truthFile);
  std::string line;
  size_t n = 0;
  while (std::getline(in, line)) {
    if (++n <= phases.size() || line.empty() || line.back() != '}') continue;
    HotPhase p;
    try {
      YAML::Node node = YAML::Load(line);
      p.start = node["start"].as<double>();
      base = node["base"].as<uint64_t>();
      for (const auto& h : node["hot"]) p.hot.insert(h.as<uint64_t>());
    } catch (const YAML::Exception&) {
      return;  // a line still being written: read it next time
    }
    phases.push_back(std::move(p));
  }
}

const HotPhase* HotSetTruth::at(double t) const {
  const HotPhase* p = nullptr;
  for (const auto& ph : phases)
    if (ph.start <= t) p = &ph;
  return p;
}

Score score(const std::vector<std::pair<uint64_t, uint64_t>>& hotRanges, const HotSetTruth& truth, const HotPhase& phase) {
  std::vector<uint64_t> covered(truth.granules, 0);
  const uint64_t limit = truth.base + truth.granules * kGranule;
  for (const auto& [s, e] : hotRanges) {
    for (uint64_t a = std::max(s, truth.base); a < e && a < limit;) {
      const uint64_t g = (a - truth.base) / kGranule;
      const uint64_t gEnd = truth.base + (g + 1) * kGranule;
      covered[g] += std::min(e, gEnd) - a;
      a = gEnd;
    }
  }
  uint64_t tp = 0, fp = 0, fn = 0;
  for (uint64_t g = 0; g < truth.granules; ++g) {
    const bool predicted = covered[g] * 2 >= kGranule;
    const bool actual = phase.hot.count(g) > 0;
    tp += predicted && actual;
    fp += predicted && !actual;
    fn += !predicted && actual;
  }
  Score s;
  s.precision = tp + fp ? double(tp) / double(tp + fp) : 1.0;
  s.recall = tp + fn ? double(tp) / double(tp + fn) : 1.0;
  return s;
}

std::vector<std::pair<uint64_t, uint64_t>> hotRanges(const profiler::Snapshot& snapshot, double threshold) {
  std::vector<std::pair<uint64_t, uint64_t>> hot;
  for (const auto& r : snapshot.regions)
    if (r.hotness >= threshold) hot.push_back({r.start, r.end});
  return hot;
}

OracleMoves oracleMoves(const std::vector<HotPhase>& phases, uint64_t capacity) {
  OracleMoves moves;
  std::set<uint64_t> top;
  // The next phase after `p` in which region g is hot (phases.size(): never).
  auto nextUse = [&](uint64_t g, size_t p) {
    for (size_t q = p + 1; q < phases.size(); ++q)
      if (phases[q].hot.count(g)) return q;
    return phases.size();
  };
  for (size_t p = 0; p < phases.size(); ++p) {
    const auto& hot = phases[p].hot;
    std::vector<uint64_t> wanted;  // hot, not on top yet
    for (uint64_t g : hot)
      if (!top.count(g)) wanted.push_back(g);
    uint64_t hotOnTop = hot.size() - wanted.size();
    wanted.resize(std::min<uint64_t>(wanted.size(), capacity > hotOnTop ? capacity - hotOnTop : 0));
    // Room: evict what is not hot now, needed again latest first.
    std::vector<std::pair<size_t, uint64_t>> evictable;
    for (uint64_t g : top)
      if (!hot.count(g)) evictable.push_back({nextUse(g, p), g});
    std::sort(evictable.rbegin(), evictable.rend());
    const uint64_t after = top.size() + wanted.size();
    const uint64_t evict = after > capacity ? after - capacity : 0;
    for (uint64_t i = 0; i < evict && i < evictable.size(); ++i) top.erase(evictable[i].second);
    moves.down += std::min<uint64_t>(evict, evictable.size());
    for (uint64_t g : wanted) top.insert(g);
    moves.up += wanted.size();
  }
  return moves;
}

double monotonicSeconds() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) / 1e9;
}

}  // namespace mtm::bench
