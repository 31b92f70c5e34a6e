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

// The sample with tiers (the first extent in tier 0, the second in tier 2 until interval 2
// moves it to tier 0), moves, and an exit.
Recording sampleWithPlacement() {
  Recording rec = sample();
  for (size_t i = 0; i < rec.intervals.size(); ++i) {
    rec.intervals[i].regions[0].tier = 0;
    rec.intervals[i].regions[1].tier = i == 2 ? 0 : 2;
    rec.events.push_back({i == 2 ? 1024u : 0u, 0, {}});
  }
  rec.events[2].events.push_back("pid 7 exited");
  return rec;
}

TEST_CASE("heatmaps know where each row was: tiers, moves and events per interval", "[heatmap]") {
  auto g = buildHeatmap(sampleWithPlacement(), 0, 8);
  CHECK(g.tierCount == 3);
  CHECK(g.tierAt(0, 0) == 0);
  CHECK(g.tierAt(5, 1) == 2);
  CHECK(g.tierAt(5, 2) == 0);
  CHECK(g.movedUpBytes == std::vector<uint64_t>{0, 0, 4 << 20});
  CHECK(g.events[2] == std::vector<std::string>{"pid 7 exited"});
  CHECK(buildHeatmap(sample(), 0, 8).tierCount == 0);  // a recording without tiers
}

TEST_CASE("heatmaps render as SVG with both panels, axes and legends, and as a PNG of the same picture", "[heatmap]") {
  auto g = buildHeatmap(sampleWithPlacement(), 0, 8);
  const std::string svg = renderSvg(g, "t");
  for (const std::string text :
       {">hotness<", ">placement<", ">time (s)<", ">+4.0 MiB<", "share of checks that found the memory accessed",
        "tier holding most of each cell", ">tier2<", "3s: pid 7 exited", "up (max 4.0 MiB an interval)", ">not profiled<"})
    CHECK(svg.find(text) != std::string::npos);
  CHECK(renderSvg(buildHeatmap(sample(), 0, 8), "t").find(">placement<") == std::string::npos);

  // PNG: rsvg-convert's rendering of the same SVG (tools/install-deps installs it).
  mtm::test::TempDir dir;
  const std::string path = dir.path() + "/h.png";
  auto written = writePng(g, "t", path);
  INFO((written.ok() ? std::string() : written.error().message()));
  REQUIRE(written.ok());
  const std::string png = mtm::test::readFile(path);
  CHECK(png.substr(0, 8) == std::string("\x89PNG\r\n\x1a\n", 8));
  CHECK(png.substr(12, 4) == "IHDR");
  auto u32 = [&](size_t at) {
    return uint32_t(uint8_t(png[at])) << 24 | uint32_t(uint8_t(png[at + 1])) << 16 | uint32_t(uint8_t(png[at + 2])) << 8 |
           uint32_t(uint8_t(png[at + 3]));
  };
  // As wide and tall as the SVG says.
  CHECK(svg.find("width=\"" + std::to_string(u32(16)) + "\" height=\"" + std::to_string(u32(20)) + "\"") != std::string::npos);
}

TEST_CASE("recordings read back what was written -- a bad file names its line", "[heatmap]") {
  mtm::test::TempDir dir;
  const std::string path = dir.path() + "/p.jsonl";
  {
    auto rec = Recorder::create(path, 500, {"ebpf_abit"});
    REQUIRE(rec.ok());
    const Recording placed = sampleWithPlacement();
    for (size_t i = 0; i < placed.intervals.size(); ++i) REQUIRE((*rec)->write(placed.intervals[i], placed.events[i]).ok());
  }
  auto back = readRecording(path);
  REQUIRE(back.ok());
  CHECK(back->intervalMs == 500);
  CHECK(back->sources == std::vector<std::string>{"ebpf_abit"});
  REQUIRE(back->intervals.size() == 3);
  CHECK(back->intervals[2].regions[1].hotness == 1.0);
  CHECK(back->intervals[2].regions[1].huge);
  CHECK(back->intervals[2].regions[1].start == 0x50000000);
  CHECK(back->intervals[1].regions[1].tier == 2);
  REQUIRE(back->events.size() == 3);
  CHECK(back->events[2].promotedPages == 1024);
  CHECK(back->events[2].events == std::vector<std::string>{"pid 7 exited"});
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
