#include <catch2/catch.hpp>

#include "Run.h"
#include "mtm/profiler/Heatmap.h"
#include "mtm/profiler/Recording.h"

using namespace mtm::profiler;

namespace {
Recording sample() {
  Recording rec;
  rec.intervalMs = 1000;
  for (int i = 0; i < 3; ++i) {
    Snapshot s;
    s.interval = i;
    s.seconds = i + 1.0;
    // Two extents with a 1 GiB gap between them; the second turns hot in interval 2.
    s.regions.push_back({7, 0x10000000, 0x10400000, 1.0, 0, 0.0, 0, -1, false});
    s.regions.push_back({7, 0x50000000, 0x50400000, i == 2 ? 1.0 : 0.0, 0, 0.0, 1, -1, true});
    rec.intervals.push_back(s);
  }
  return rec;
}
}  // namespace

TEST_CASE("heatmaps join the profiled extents and average hotness per cell", "[heatmap]") {
  auto g = buildHeatmap(sample(), 0, 8);
  REQUIRE(g.columns == 3);
  REQUIRE(g.rows == 8);  // 8 MiB of profiled memory, the gap left out
  CHECK(g.bytesPerRow == 1 << 20);
  CHECK(g.rowAddress[4] == 0x50000000);
  CHECK(g.at(0, 0) == 1.0);
  CHECK(g.at(5, 1) == 0.0);
  CHECK(g.at(5, 2) == 1.0);
  CHECK(buildHeatmap(sample(), 99, 8).rows == 0);  // another pid: nothing
}

TEST_CASE("heatmaps render as SVG and as a valid PNG", "[heatmap]") {
  auto g = buildHeatmap(sample(), 0, 8);
  const std::string svg = renderSvg(g, "t");
  size_t rects = 0;
  for (size_t p = svg.find("<rect x="); p != std::string::npos; p = svg.find("<rect x=", p + 1)) ++rects;
  CHECK(rects == 3 * 8);
  const std::string png = renderPng(g, 2);
  CHECK(png.substr(0, 8) == std::string("\x89PNG\r\n\x1a\n", 8));
  CHECK(png.substr(12, 4) == "IHDR");
  CHECK(static_cast<unsigned char>(png[19]) == 6);   // width 3 * 2
  CHECK(static_cast<unsigned char>(png[23]) == 16);  // height 8 * 2
  CHECK(png.substr(png.size() - 8, 4) == "IEND");
}

TEST_CASE("recordings read back what was written -- a bad file names its line", "[heatmap]") {
  mtm::test::TempDir dir;
  const std::string path = dir.path() + "/p.jsonl";
  {
    auto rec = Recorder::create(path, 500, {"ebpf_abit"});
    REQUIRE(rec.ok());
    for (const auto& s : sample().intervals) REQUIRE((*rec)->write(s).ok());
  }
  auto back = readRecording(path);
  REQUIRE(back.ok());
  CHECK(back->intervalMs == 500);
  CHECK(back->sources == std::vector<std::string>{"ebpf_abit"});
  REQUIRE(back->intervals.size() == 3);
  CHECK(back->intervals[2].regions[1].hotness == 1.0);
  CHECK(back->intervals[2].regions[1].huge);
  CHECK(back->intervals[2].regions[1].start == 0x50000000);
  // Each line carries the machine's monotonic clock, in the order written.
  REQUIRE(back->monotonic.size() == 3);
  CHECK(back->monotonic[0] > 0);
  CHECK(back->monotonic[2] >= back->monotonic[0]);

  auto bad = readRecording(dir.write("bad.jsonl", "{\"mtm_profile\":1,\"interval_ms\":1,\"sources\":[]}\n{\"interval\": [\n"));
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message().find("bad.jsonl:2: malformed profile line") != std::string::npos);
  auto notOurs = readRecording(dir.write("x.jsonl", "{\"a\":1}\n"));
  REQUIRE_FALSE(notOurs.ok());
  CHECK(notOurs.error().message().find("x.jsonl:1: not an mtm profile") != std::string::npos);
}
