#include "mtm/profiler/Heatmap.h"

#include <zlib.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <map>

namespace mtm::profiler {
namespace {

struct Rgb {
  uint8_t r, g, b;
};

// Black -> purple -> orange -> pale yellow, like the heatmaps people read at a glance.
Rgb colour(double v) {
  if (v < 0) return {235, 235, 235};  // not profiled
  static const std::array<std::array<double, 3>, 5> stops{{{0, 0, 4}, {87, 16, 110}, {188, 55, 84}, {249, 142, 9}, {252, 255, 164}}};
  v = std::clamp(v, 0.0, 1.0) * (stops.size() - 1);
  const size_t i = std::min<size_t>(static_cast<size_t>(v), stops.size() - 2);
  const double f = v - double(i);
  auto mix = [&](int c) { return static_cast<uint8_t>(stops[i][c] + (stops[i + 1][c] - stops[i][c]) * f); };
  return {mix(0), mix(1), mix(2)};
}

void appendU32(std::string& s, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) s.push_back(static_cast<char>((v >> shift) & 0xff));
}

void appendChunk(std::string& png, const char* type, const std::string& data) {
  appendU32(png, static_cast<uint32_t>(data.size()));
  std::string body = std::string(type, 4) + data;
  png += body;
  appendU32(png, static_cast<uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(body.data()), static_cast<uInt>(body.size()))));
}

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

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
    if (!merged.empty() && s <= merged.back().second) merged.back().second = std::max(merged.back().second, e);
    else merged.push_back({s, e});
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
  g.cells.assign(g.rows * g.columns, -1);
  std::vector<double> weight(g.rows * g.columns, 0);
  for (size_t col = 0; col < g.columns; ++col) {
    const auto& s = rec.intervals[col];
    g.seconds.push_back(s.seconds);
    for (const auto& r : s.regions) {
      if (pid != 0 && r.pid != pid) continue;
      const uint64_t a = joined(r.start), b = a + (r.end - r.start);
      for (uint64_t row = a / g.bytesPerRow; row * g.bytesPerRow < b && row < g.rows; ++row) {
        const uint64_t lo = std::max(a, row * g.bytesPerRow), hi = std::min(b, (row + 1) * g.bytesPerRow);
        const double w = double(hi - lo);
        double& cell = g.cells[row * g.columns + col];
        double& cw = weight[row * g.columns + col];
        cell = (std::max(cell, 0.0) * cw + r.hotness * w) / (cw + w);
        cw += w;
      }
    }
  }
  return g;
}

std::string renderSvg(const HeatmapGrid& g, const std::string& title) {
  const int cell = 6, left = 120, top = 40, bottom = 40;
  const int width = left + static_cast<int>(g.columns) * cell + 20;
  const int height = top + static_cast<int>(g.rows) * cell + bottom;
  char buf[256];
  std::string svg;
  std::snprintf(buf, sizeof buf,
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" font-size=\"11\">\n",
                width, height);
  svg += buf;
  svg += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  svg += "<text x=\"" + std::to_string(left) + "\" y=\"20\" font-size=\"14\">" + title + "</text>\n";
  for (size_t row = 0; row < g.rows; ++row) {
    for (size_t col = 0; col < g.columns; ++col) {
      const Rgb c = colour(g.at(row, col));
      std::snprintf(buf, sizeof buf, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#%02x%02x%02x\"/>\n",
                    left + static_cast<int>(col) * cell, top + static_cast<int>(row) * cell, cell, cell, c.r, c.g, c.b);
      svg += buf;
    }
  }
  // Address ticks down the left, time ticks along the bottom.
  const size_t rowStep = std::max<size_t>(1, g.rows / 8), colStep = std::max<size_t>(1, g.columns / 8);
  for (size_t row = 0; row < g.rows; row += rowStep)
    svg += "<text x=\"4\" y=\"" + std::to_string(top + static_cast<int>(row) * cell + cell) + "\">" + hex(g.rowAddress[row]) + "</text>\n";
  for (size_t col = 0; col < g.columns; col += colStep) {
    std::snprintf(buf, sizeof buf, "<text x=\"%d\" y=\"%d\">%.0fs</text>\n", left + static_cast<int>(col) * cell,
                  top + static_cast<int>(g.rows) * cell + 16, g.seconds[col]);
    svg += buf;
  }
  std::snprintf(buf, sizeof buf, "<text x=\"%d\" y=\"%d\">time &#8594; (address &#8595;, %llu KiB per row; colour = hotness)</text>\n",
                left, height - 8, static_cast<unsigned long long>(g.bytesPerRow / 1024));
  svg += buf;
  return svg + "</svg>\n";
}

std::string renderPng(const HeatmapGrid& g, unsigned scale) {
  const uint32_t w = static_cast<uint32_t>(std::max<size_t>(1, g.columns) * scale);
  const uint32_t h = static_cast<uint32_t>(std::max<size_t>(1, g.rows) * scale);
  std::string raw;
  raw.reserve(static_cast<size_t>(h) * (1 + w * 3));
  for (uint32_t y = 0; y < h; ++y) {
    raw.push_back(0);  // filter: none
    for (uint32_t x = 0; x < w; ++x) {
      const Rgb c = g.rows && g.columns ? colour(g.at(y / scale, x / scale)) : Rgb{235, 235, 235};
      raw.push_back(static_cast<char>(c.r));
      raw.push_back(static_cast<char>(c.g));
      raw.push_back(static_cast<char>(c.b));
    }
  }
  uLongf size = compressBound(static_cast<uLong>(raw.size()));
  std::string z(size, '\0');
  compress2(reinterpret_cast<Bytef*>(z.data()), &size, reinterpret_cast<const Bytef*>(raw.data()), static_cast<uLong>(raw.size()), 6);
  z.resize(size);
  std::string png("\x89PNG\r\n\x1a\n", 8);
  std::string ihdr;
  appendU32(ihdr, w);
  appendU32(ihdr, h);
  ihdr += std::string("\x08\x02\x00\x00\x00", 5);  // 8-bit RGB, deflate, no filter, no interlace
  appendChunk(png, "IHDR", ihdr);
  appendChunk(png, "IDAT", z);
  appendChunk(png, "IEND", "");
  return png;
}

}  // namespace mtm::profiler
