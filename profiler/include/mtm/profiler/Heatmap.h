#pragma once
// Heatmaps of a recording, like damo's: time across, address down, colour = hotness. The
// address axis joins the profiled extents and leaves out the gaps between them.

#include <cstdint>
#include <string>
#include <vector>

#include "mtm/profiler/Recording.h"

namespace mtm::profiler {

struct HeatmapGrid {
  size_t columns = 0, rows = 0;        // intervals x address bins
  std::vector<double> cells;           // row-major, hotness in [0, 1]; < 0 where nothing was profiled
  std::vector<double> seconds;         // per column
  std::vector<uint64_t> rowAddress;    // first address of each row
  uint64_t bytesPerRow = 0;
  double at(size_t row, size_t col) const { return cells[row * columns + col]; }
};

// Bins the recording's regions of `pid` (0: every process) into `rows` address bins.
HeatmapGrid buildHeatmap(const Recording& rec, int pid, size_t rows);

std::string renderSvg(const HeatmapGrid& grid, const std::string& title);
// An 8-bit RGB PNG, each cell `scale` pixels square.
std::string renderPng(const HeatmapGrid& grid, unsigned scale);

}  // namespace mtm::profiler
