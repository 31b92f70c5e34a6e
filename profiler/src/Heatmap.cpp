#include "mtm/profiler/Heatmap.h"

#include <algorithm>
#include <map>

namespace mtm::profiler {
namespace {

constexpr int kMaxTiers = 8;  // a machine with more draws the slower ones as the 8th
constexpr uint64_t kPageBytes = 4096;

}  // namespace

HeatmapGrid buildHeatmap(const Recording& rec, int pid, size_t rows) {
  HeatmapGrid g;
  // The address axis: every extent any interval profiled, merged, gaps left out.
  std::map<uint64_t, uint64_t> extents;
  for (const auto& s : rec.intervals)
    for (const auto& r : s.regions)
      if (pid == 0 || r.pid == pid) {
        auto& e = extents[r.start];
        e = std::max(e, r.end);
      }
  std::vector<std::pair<uint64_t, uint64_t>> merged;
  for (const auto& [s, e] : extents) {
    if (!merged.empty() && s <= merged.back().second)
      merged.back().second = std::max(merged.back().second, e);
    else
      merged.push_back({s, e});
  }
  uint64_t total = 0;
  for (const auto& [s, e] : merged) total += e - s;
  g.columns = rec.intervals.size();
  if (total == 0 || g.columns == 0 || rows == 0) return g;
  g.rows = rows;
  g.bytesPerRow = std::max<uint64_t>(4096, (total + rows - 1) / rows);
  g.rows = static_cast<size_t>((total + g.bytesPerRow - 1) / g.bytesPerRow);
  // Joined position of an address, and back.
  std::vector<uint64_t> offset;  // joined offset of each merged extent
  uint64_t acc = 0;
  for (const auto& [s, e] : merged) {
    offset.push_back(acc);
    acc += e - s;
  }
  auto joined = [&](uint64_t addr) -> uint64_t {
    auto it = std::upper_bound(merged.begin(), merged.end(), addr, [](uint64_t a, const auto& m) { return a < m.first; });
    size_t i = static_cast<size_t>(it - merged.begin()) - 1;
    return offset[i] + (addr - merged[i].first);
  };
  for (size_t row = 0; row < g.rows; ++row) {
    const uint64_t pos = row * g.bytesPerRow;
    size_t i = static_cast<size_t>(std::upper_bound(offset.begin(), offset.end(), pos) - offset.begin()) - 1;
    g.rowAddress.push_back(merged[i].first + (pos - offset[i]));
  }
  for (const auto& snap : rec.intervals)
    for (const auto& r : snap.regions)
      if (pid == 0 || r.pid == pid) g.tierCount = std::max(g.tierCount, std::min(r.tier, kMaxTiers - 1) + 1);
  g.cells.assign(g.rows * g.columns, -1);
  g.tiers.assign(g.rows * g.columns, -1);
  std::vector<double> weight(g.rows * g.columns, 0);
  std::vector<uint64_t> tierBytes(g.rows * size_t(g.tierCount));  // this column's, per row and tier
  for (size_t col = 0; col < g.columns; ++col) {
    const auto& snap = rec.intervals[col];
    g.seconds.push_back(snap.seconds);
    const IntervalEvents none;
    const IntervalEvents& ev = col < rec.events.size() ? rec.events[col] : none;
    g.movedUpBytes.push_back(ev.promotedPages * kPageBytes);
    g.movedDownBytes.push_back(ev.demotedPages * kPageBytes);
    g.events.push_back(ev.events);
    std::fill(tierBytes.begin(), tierBytes.end(), 0);
    for (const auto& r : snap.regions) {
      if (pid != 0 && r.pid != pid) continue;
      const uint64_t a = joined(r.start), b = a + (r.end - r.start);
      for (uint64_t row = a / g.bytesPerRow; row * g.bytesPerRow < b && row < g.rows; ++row) {
        const uint64_t lo = std::max(a, row * g.bytesPerRow), hi = std::min(b, (row + 1) * g.bytesPerRow);
        const double w = double(hi - lo);
        double& cell = g.cells[row * g.columns + col];
        double& cw = weight[row * g.columns + col];
        cell = (std::max(cell, 0.0) * cw + r.hotness * w) / (cw + w);
        cw += w;
        if (r.tier >= 0) tierBytes[row * size_t(g.tierCount) + size_t(std::min(r.tier, kMaxTiers - 1))] += hi - lo;
      }
    }
    for (size_t row = 0; row < g.rows && g.tierCount > 0; ++row) {
      const auto first = tierBytes.begin() + std::ptrdiff_t(row * size_t(g.tierCount));
      const auto most = std::max_element(first, first + g.tierCount);
      if (*most > 0) g.tiers[row * g.columns + col] = static_cast<int>(most - first);
    }
  }
  return g;
}

}  // namespace mtm::profiler
