#pragma once
// Heatmaps of a recording, like damo's: time across, address down. Beside hotness, a second
// panel shows the tier each address row sat in over time (when the recording knows tiers);
// below them, the bytes moved up and down each interval; event markers (an exit, ...) across
// both. The address axis joins the profiled extents and leaves out the gaps between them.

#include <cstdint>
#include <string>
#include <vector>

#include "mtm/profiler/Recording.h"

namespace mtm::profiler {

struct HeatmapGrid {
  size_t columns = 0, rows = 0;      // intervals x address bins
  std::vector<double> cells;         // row-major, hotness in [0, 1]; < 0 where nothing was profiled
  std::vector<int> tiers;            // row-major, the tier holding most of the cell's bytes; -1: unknown
  int tierCount = 0;                 // 1 + the slowest tier seen; 0 when the recording has no tiers
  std::vector<double> seconds;       // per column
  std::vector<uint64_t> rowAddress;  // first address of each row
  uint64_t bytesPerRow = 0;
  std::vector<uint64_t> movedUpBytes;  // per column: promoted, demoted
  std::vector<uint64_t> movedDownBytes;
  std::vector<std::vector<std::string>> events;  // per column
  double at(size_t row, size_t col) const { return cells[row * columns + col]; }
  int tierAt(size_t row, size_t col) const { return tiers[row * columns + col]; }
};

// Bins the recording's regions of `pid` (0: every process) into `rows` address bins.
HeatmapGrid buildHeatmap(const Recording& rec, int pid, size_t rows);

// The picture: title, hotness and tier panels, moves, events, axes in seconds and MiB, legends.
std::string renderSvg(const HeatmapGrid& grid, const std::string& title);
// The same picture as a PNG file at `path`: the SVG rasterised by rsvg-convert (librsvg2-bin);
// without it, an error that says how to get it.
Status writePng(const HeatmapGrid& grid, const std::string& title, const std::string& path);

}  // namespace mtm::profiler
