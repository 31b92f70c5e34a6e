// The heatmap as a picture: SVG written here, PNG by rsvg-convert (librsvg) from that SVG -- a
// program, not a library, so that mtmd and mtmctl stay free of librsvg's 50 MB of libraries.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>

#include <fmt/format.h>

#include "mtm/UniqueFd.h"
#include "mtm/profiler/Heatmap.h"

namespace mtm::profiler {
namespace {

struct Rgb {
  uint8_t r, g, b;
  bool operator==(const Rgb&) const = default;
};

const Rgb kNotProfiled{235, 235, 235};

// Hotness: black -> purple -> orange -> pale yellow, like the heatmaps people read at a glance.
Rgb hotnessColour(double v) {
  if (v < 0) return kNotProfiled;
  static const std::array<std::array<double, 3>, 5> stops{{{0, 0, 4}, {87, 16, 110}, {188, 55, 84}, {249, 142, 9}, {252, 255, 164}}};
  v = std::clamp(v, 0.0, 1.0) * (stops.size() - 1);
  const size_t i = std::min<size_t>(static_cast<size_t>(v), stops.size() - 2);
  const double f = v - double(i);
  auto mix = [&](int c) { return static_cast<uint8_t>(stops[i][c] + (stops[i + 1][c] - stops[i][c]) * f); };
  return {mix(0), mix(1), mix(2)};
}

// Tiers: one distinct colour each, fastest first (blue, green, orange, red, ...).
Rgb tierColour(int tier) {
  static const std::array<Rgb, 8> colours{
      {{31, 119, 180}, {44, 160, 44}, {255, 127, 14}, {214, 39, 40}, {148, 103, 189}, {140, 86, 75}, {227, 119, 194}, {127, 127, 127}}};
  return tier < 0 ? kNotProfiled : colours[static_cast<size_t>(tier) % colours.size()];
}

std::string fill(Rgb c) { return fmt::format("#{:02x}{:02x}{:02x}", c.r, c.g, c.b); }

std::string escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '&')
      out += "&amp;";
    else if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '"')
      out += "&quot;";
    else
      out += c;
  }
  return out;
}

std::string mib(uint64_t bytes) {
  const double m = double(bytes) / double(1 << 20);
  return m >= 10 ? fmt::format("{:.0f}", m) : fmt::format("{:.1f}", m);
}

// Where things go on the page.
struct Layout {
  int cellW = 6, cellH = 6;
  int left = 96, top = 70;
  int panelW = 0, panelH = 0, gap = 48;
  int movesTop = 0, movesH = 60;
  int legendTop = 0, width = 0, height = 0;
  int panelX(int panel) const { return left + panel * (panelW + gap); }
  int colX(int panel, size_t col) const { return panelX(panel) + static_cast<int>(col) * cellW; }
};

Layout layoutFor(const HeatmapGrid& g) {
  Layout l;
  l.cellW = std::clamp(900 / std::max<int>(1, static_cast<int>(g.columns)), 1, 6);
  l.cellH = std::clamp(640 / std::max<int>(1, static_cast<int>(g.rows)), 2, 6);
  l.panelW = static_cast<int>(g.columns) * l.cellW;
  l.panelH = static_cast<int>(g.rows) * l.cellH;
  const int panels = g.tierCount > 0 ? 2 : 1;
  l.movesTop = l.top + l.panelH + 34;
  l.legendTop = l.movesTop + l.movesH + 40;
  l.width = std::max(l.left + panels * l.panelW + (panels - 1) * l.gap + 24, 760);
  l.height = l.legendTop + 60;
  return l;
}

// One panel of cells; `colourOf(row, col)` picks each.
template <typename ColourOf>
void drawCells(std::string& svg, const HeatmapGrid& g, const Layout& l, int panel, ColourOf colourOf) {
  for (size_t row = 0; row < g.rows; ++row) {
    // Runs of one colour along a row become one rectangle: a long recording stays small.
    for (size_t col = 0; col < g.columns;) {
      const Rgb c = colourOf(row, col);
      size_t end = col + 1;
      while (end < g.columns && colourOf(row, end) == c) ++end;
      svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"/>\n", l.colX(panel, col),
                         l.top + static_cast<int>(row) * l.cellH, static_cast<int>(end - col) * l.cellW, l.cellH, fill(c));
      col = end;
    }
  }
}

// Seconds along the bottom of a panel, MiB into the profiled memory down its left.
void drawAxes(std::string& svg, const HeatmapGrid& g, const Layout& l, int panel, const std::string& name) {
  const int x0 = l.panelX(panel);
  svg += fmt::format("<text x=\"{}\" y=\"{}\" font-weight=\"bold\">{}</text>\n", x0, l.top - 8, name);
  const size_t colStep = std::max<size_t>(1, g.columns / 8);
  for (size_t col = 0; col < g.columns; col += colStep)
    svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{:.0f}</text>\n", l.colX(panel, col), l.top + l.panelH + 14,
                       g.seconds[col]);
  svg += fmt::format("<text x=\"{}\" y=\"{}\">time (s)</text>\n", x0 + l.panelW - 40, l.top + l.panelH + 28);
  if (panel > 0) return;
  const size_t rowStep = std::max<size_t>(1, g.rows / 10);
  for (size_t row = 0; row < g.rows; row += rowStep)
    svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">+{} MiB</text>\n", x0 - 6,
                       l.top + static_cast<int>(row) * l.cellH + l.cellH, mib(row * g.bytesPerRow));
  svg += fmt::format("<text x=\"8\" y=\"{}\" transform=\"rotate(-90 8 {})\">address (gaps between mappings left out)</text>\n",
                     l.top + l.panelH, l.top + l.panelH);
}

// Bars per interval: bytes moved up above the line, down below it.
void drawMoves(std::string& svg, const HeatmapGrid& g, const Layout& l) {
  uint64_t most = 0;
  for (size_t col = 0; col < g.columns; ++col) most = std::max({most, g.movedUpBytes[col], g.movedDownBytes[col]});
  const int mid = l.movesTop + l.movesH / 2;
  svg += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#888\"/>\n", l.left, mid, l.left + l.panelW, mid);
  svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">moved</text>\n", l.left - 6, mid + 4);
  if (most == 0) {
    svg += fmt::format("<text x=\"{}\" y=\"{}\" fill=\"#888\">no moves recorded</text>\n", l.left + 4, mid - 4);
    return;
  }
  const double scale = double(l.movesH / 2) / double(most);
  for (size_t col = 0; col < g.columns; ++col) {
    const int up = static_cast<int>(std::lround(double(g.movedUpBytes[col]) * scale));
    const int down = static_cast<int>(std::lround(double(g.movedDownBytes[col]) * scale));
    if (up > 0)
      svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#2ca02c\"/>\n", l.colX(0, col), mid - up, l.cellW, up);
    if (down > 0)
      svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#d62728\"/>\n", l.colX(0, col), mid, l.cellW, down);
  }
  svg += fmt::format("<text x=\"{}\" y=\"{}\" fill=\"#2ca02c\">up (max {} MiB an interval)</text>\n", l.left + l.panelW + 6,
                     l.movesTop + 10, mib(most));
  svg += fmt::format("<text x=\"{}\" y=\"{}\" fill=\"#d62728\">down</text>\n", l.left + l.panelW + 6, l.movesTop + l.movesH);
}

// A dashed line across the panels at each interval with events, labelled above them.
void drawEvents(std::string& svg, const HeatmapGrid& g, const Layout& l) {
  const int panels = g.tierCount > 0 ? 2 : 1;
  int labelled = 0;
  for (size_t col = 0; col < g.columns; ++col) {
    if (g.events[col].empty()) continue;
    std::string text;
    for (const auto& e : g.events[col]) text += (text.empty() ? "" : "; ") + e;
    for (int panel = 0; panel < panels; ++panel) {
      const int x = l.colX(panel, col);
      svg += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#00a0a0\" stroke-dasharray=\"3,2\"/>\n", x, l.top - 4, x,
                         l.top + l.panelH);
    }
    svg += fmt::format("<text x=\"{}\" y=\"{}\" fill=\"#008080\" font-size=\"10\">{:.0f}s: {}</text>\n", l.colX(0, col),
                       l.top - 36 + (labelled % 2) * 11, g.seconds[col], escape(text));
    ++labelled;
  }
}

void drawLegends(std::string& svg, const HeatmapGrid& g, const Layout& l) {
  int x = l.left;
  const int y = l.legendTop;
  svg += fmt::format("<text x=\"{}\" y=\"{}\">hotness: the share of checks that found the memory accessed</text>\n", x, y);
  for (int i = 0; i <= 100; ++i)
    svg +=
        fmt::format("<rect x=\"{}\" y=\"{}\" width=\"2\" height=\"12\" fill=\"{}\"/>\n", x + i * 2, y + 6, fill(hotnessColour(i / 100.0)));
  svg += fmt::format("<text x=\"{}\" y=\"{}\">0</text><text x=\"{}\" y=\"{}\">1</text>\n", x, y + 32, x + 196, y + 32);
  svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"{}\"/><text x=\"{}\" y=\"{}\">not profiled</text>\n",
                     x + 220, y + 6, fill(kNotProfiled), x + 236, y + 16);
  if (g.tierCount == 0) return;
  x = std::max(l.panelX(1), x + 330);
  svg += fmt::format("<text x=\"{}\" y=\"{}\">tier holding most of each cell (0 = fastest)</text>\n", x, y);
  for (int t = 0; t < g.tierCount; ++t)
    svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"{}\"/><text x=\"{}\" y=\"{}\">tier{}</text>\n",
                       x + t * 64, y + 6, fill(tierColour(t)), x + t * 64 + 16, y + 16, t);
}

}  // namespace

std::string renderSvg(const HeatmapGrid& g, const std::string& title) {
  const Layout l = layoutFor(g);
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" font-family=\"DejaVu Sans, sans-serif\" "
      "font-size=\"11\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
      l.width, l.height);
  svg +=
      fmt::format("<text x=\"{}\" y=\"16\" font-size=\"14\">{} ({} per row)</text>\n", l.left, escape(title), mib(g.bytesPerRow) + " MiB");
  drawCells(svg, g, l, 0, [&](size_t row, size_t col) { return hotnessColour(g.at(row, col)); });
  drawAxes(svg, g, l, 0, "hotness");
  if (g.tierCount > 0) {
    drawCells(svg, g, l, 1, [&](size_t row, size_t col) { return tierColour(g.tierAt(row, col)); });
    drawAxes(svg, g, l, 1, "placement");
  }
  drawMoves(svg, g, l);
  drawEvents(svg, g, l);
  drawLegends(svg, g, l);
  return svg + "</svg>\n";
}

Status writePng(const HeatmapGrid& g, const std::string& title, const std::string& path) {
  char svgPath[] = "/tmp/mtm-heatmap-XXXXXX.svg";
  UniqueFd fd(::mkstemps(svgPath, 4));
  if (!fd) return Error::fromErrno("heatmap: cannot create a temporary SVG", errno);
  const std::string svg = renderSvg(g, title);
  const bool written = ::write(fd.get(), svg.data(), svg.size()) == ssize_t(svg.size());
  fd.reset();
  Status status;
  if (!written) {
    status = Error::fromErrno(std::string("heatmap: cannot write ") + svgPath, errno);
  } else {
    const pid_t child = ::fork();
    if (child == 0) {
      ::execlp("rsvg-convert", "rsvg-convert", "--format", "png", "--output", path.c_str(), svgPath, nullptr);
      ::_exit(errno == ENOENT ? 127 : 126);
    }
    int wstatus = 0;
    if (child < 0 || ::waitpid(child, &wstatus, 0) != child)
      status = Error::fromErrno("heatmap: cannot run rsvg-convert", errno);
    else if (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 127)
      status =
          Error("a PNG heatmap needs rsvg-convert (apt-get install librsvg2-bin); or write " + path.substr(0, path.size() - 4) + ".svg");
    else if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0)
      status = Error("rsvg-convert could not turn the heatmap into " + path);
  }
  ::unlink(svgPath);
  return status;
}

}  // namespace mtm::profiler
