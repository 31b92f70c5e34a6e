#include <catch2/catch.hpp>

#include "mtm/profiler/Regions.h"

using namespace mtm;
using namespace mtm::profiler;

namespace {

constexpr uint64_t kB = 0x7f0000000000, kM = 1 << 20;

Vma vma(uint64_t start, uint64_t end, const char* perms = "rw-p", const char* path = "") {
  Vma v;
  v.start = start;
  v.end = end;
  v.perms = perms;
  v.path = path;
  return v;
}

// Observes `n` pages of [start, end), each accessed or not.
void touch(RegionSet& rs, uint64_t start, uint64_t end, bool accessed, int n = 16) {
  for (int i = 0; i < n; ++i) rs.observe(start + (end - start) / n * i, accessed);
}

// One region over [kB, kB + bytes) that may then split up to 64 ways.
struct OneRegion {
  config::ProfilerConfig cfg;
  RegionSet rs{cfg};
  explicit OneRegion(uint64_t bytes) {
    cfg.maxRegions = 2;
    rs.rebuild({vma(kB, kB + bytes)});
    REQUIRE(rs.regions().size() == 1);
    cfg.maxRegions = 64;
  }
};

// [kB, kB + 32 MiB) split in two halves by one interval's checks, then both halves cold for
// `intervals` intervals, their checks placing the pages on `lowNode` and `highNode` (-1: none).
struct ColdHalves : OneRegion {
  ColdHalves() : OneRegion(32 * kM) {
    touch(rs, kB, kB + 16 * kM, true);
    touch(rs, kB + 16 * kM, kB + 32 * kM, false);
    rs.endInterval();
    REQUIRE(rs.regions().size() == 2);
  }
  void coldFor(int intervals, int lowNode, int highNode) {
    for (int i = 0; i < intervals; ++i) {
      for (uint64_t k = 0; k < 16; ++k) {
        rs.observe(kB + k * kM, false, lowNode);
        rs.observe(kB + 16 * kM + k * kM, false, highNode);
      }
      rs.endInterval();
    }
  }
};

}  // namespace

TEST_CASE("regions cover the private writable memory, in 2 MiB-aligned pieces", "[regions]") {
  config::ProfilerConfig cfg;
  cfg.maxRegions = 8;  // pieces of total / 4
  RegionSet rs(cfg);
  rs.rebuild({vma(kB, kB + 32 * kM), vma(kB + 64 * kM, kB + 65 * kM, "r-xp", "/usr/bin/x"),
              vma(0xffffffffff600000, 0xffffffffff601000, "--xp", "[vsyscall]")});
  REQUIRE(rs.regions().size() == 4);
  CHECK(rs.regions()[0].start == kB);
  CHECK(rs.regions()[0].end == kB + 8 * kM);
  CHECK(rs.bytes() == 32 * kM);
  CHECK(rs.find(kB + 9 * kM) == &rs.regions()[1]);
  CHECK(rs.find(kB + 64 * kM) == nullptr);
}

TEST_CASE("hotness decays, confidence counts checks, node follows the votes", "[regions]") {
  config::ProfilerConfig cfg;
  RegionSet rs(cfg);
  rs.rebuild({vma(kB, kB + 2 * kM)});
  touch(rs, kB, kB + 2 * kM, true);
  rs.observe(kB, true, 3);
  rs.endInterval();
  const Region& r = rs.regions()[0];
  CHECK(r.hotness == Approx(1.0));
  CHECK(r.node == 3);
  // Half the checks accessed, alternating (all idle would be a change: ChangeTestTest.cpp).
  for (int i = 0; i < 16; ++i) rs.observe(kB + 2 * kM / 16 * i, i % 2 == 0);
  rs.endInterval();
  CHECK(rs.regions()[0].hotness == Approx(0.75));  // decay 0.5
  rs.endInterval();                                // nothing checked: hotness stays
  CHECK(rs.regions()[0].hotness == Approx(0.75));
  CHECK(rs.regions()[0].confidence < 25);
}

TEST_CASE("a region whose halves disagree splits -- settled similar neighbours merge", "[regions]") {
  OneRegion one(32 * kM);
  RegionSet& rs = one.rs;
  touch(rs, kB, kB + 16 * kM, true);
  touch(rs, kB + 16 * kM, kB + 32 * kM, false);
  auto stats = rs.endInterval();
  CHECK(stats.splits == 1);
  REQUIRE(rs.regions().size() == 2);
  CHECK(rs.regions()[0].end == kB + 16 * kM);
  CHECK(rs.regions()[0].hotness == Approx(1.0));
  CHECK(rs.regions()[1].hotness == Approx(0.0));
  // Both halves turn cold and stay so: once their hotness is within merge_difference (0.5^5
  // < 0.05) they are one region again.
  for (int i = 0; i < 3; ++i) {
    touch(rs, kB, kB + 32 * kM, false, 32);
    rs.endInterval();
  }
  CHECK(rs.regions().size() == 2);
  for (int i = 0; i < 3; ++i) {
    touch(rs, kB, kB + 32 * kM, false, 32);
    rs.endInterval();
  }
  CHECK(rs.regions().size() == 1);
  CHECK(rs.regions()[0].end == kB + 32 * kM);
}

TEST_CASE("THP-backed regions split on 2 MiB boundaries only", "[regions]") {
  OneRegion one(6 * kM);
  RegionSet& rs = one.rs;
  rs.observe(kB, true, -1, mtm::profiler::Mapping::pmd);  // seen as a THP
  touch(rs, kB, kB + 2 * kM, true, 4);
  touch(rs, kB + 4 * kM, kB + 6 * kM, false, 4);
  rs.endInterval();
  for (const auto& r : rs.regions()) {
    CHECK(r.start % (2 * kM) == 0);
    CHECK(r.end % (2 * kM) == 0);
  }
}

TEST_CASE("a small hot run inside a large cold region is cut out on both sides", "[regions]") {
  // 4 hot THPs among 30: no single cut separates them by split_variation (the best leaves 4 of
  // 14 or 4 of 20 hot on one side), two cuts do.
  OneRegion one(60 * kM);
  RegionSet& rs = one.rs;
  for (uint64_t t = 0; t < 30; ++t) {
    const bool hot = t >= 10 && t < 14;
    rs.observe(kB + t * 2 * kM + 4096, hot, -1, Mapping::pmd);
  }
  auto stats = rs.endInterval();
  CHECK(stats.splits == 2);
  REQUIRE(rs.regions().size() == 3);
  CHECK(rs.regions()[1].start == kB + 20 * kM);
  CHECK(rs.regions()[1].end == kB + 28 * kM);
  CHECK(rs.regions()[1].hotness == Approx(1.0));
  CHECK(rs.regions()[0].hotness == Approx(0.0));
  CHECK(rs.regions()[2].hotness == Approx(0.0));
}

TEST_CASE("a region whose checks agree does not split", "[regions]") {
  OneRegion one(32 * kM);
  RegionSet& rs = one.rs;
  // Every other page accessed all along the region: half hot everywhere, nothing to separate.
  for (int i = 0; i < 64; ++i) rs.observe(kB + uint64_t(i) * 512 * 1024, i % 2 == 0);
  CHECK(rs.endInterval().splits == 0);
  CHECK(rs.regions().size() == 1);
}

TEST_CASE("rebuilding after a layout change keeps the history of what remains", "[regions]") {
  config::ProfilerConfig cfg;
  cfg.maxRegions = 4;
  RegionSet rs(cfg);
  rs.rebuild({vma(kB, kB + 16 * kM)});
  touch(rs, kB, kB + 8 * kM, true);
  rs.endInterval();
  const double hot = rs.find(kB)->hotness;
  CHECK(hot > 0.9);
  // The VMA shrinks (munmap of its tail) and a new one appears.
  rs.rebuild({vma(kB, kB + 12 * kM), vma(kB + 32 * kM, kB + 34 * kM)});
  CHECK(rs.find(kB)->hotness == hot);
  CHECK(rs.find(kB + 13 * kM) == nullptr);
  REQUIRE(rs.find(kB + 33 * kM) != nullptr);
  CHECK(rs.find(kB + 33 * kM)->hotness == 0);
  CHECK(rs.bytes() == 14 * kM);
}

TEST_CASE("DAMON-style range observations weigh in by fraction", "[regions]") {
  config::ProfilerConfig cfg;
  cfg.maxRegions = 2;
  RegionSet rs(cfg);
  rs.rebuild({vma(kB, kB + 4 * kM)});
  rs.observeRange(kB, kB + 4 * kM, 0.75);
  rs.endInterval();
  CHECK(rs.regions().front().hotness == Approx(0.75));
}

TEST_CASE("cold neighbours on different nodes stay apart: a region is in one place", "[regions]") {
  ColdHalves halves;
  halves.coldFor(8, 0, 3);  // the first half's pages on node 0, the second's on node 3
  const auto& regions = halves.rs.regions();
  REQUIRE(regions.size() == 2);
  CHECK(regions[0].node == 0);
  CHECK(regions[1].node == 3);
}

// A region whose pages no check has located (page faults carry no node) merges only with another
// such: merged into a neighbour on node 0, memory still on node 3 hid in a region that read as on
// top (VM lab), until one check on it took the whole region's reading down.
TEST_CASE("a region on a node no check has found merges with no region on a known node", "[regions]") {
  ColdHalves halves;
  halves.coldFor(8, 0, -1);  // only the first half's checks say where its pages are
  const auto& regions = halves.rs.regions();
  REQUIRE(regions.size() == 2);
  CHECK(regions[0].node == 0);
  CHECK(regions[1].node == -1);
  halves.coldFor(3, 0, 0);  // once located on the same node, they merge
  CHECK(regions.size() == 1);
}

TEST_CASE("a THP's skew comes from samples with exact addresses -- even access reads 0 and one hot eighth 0.875", "[regions]") {
  config::ProfilerConfig cfg;
  cfg.maxRegions = 1;
  cfg.hotnessDecay = 0;
  RegionSet rs(cfg);
  rs.rebuild({vma(kB, kB + 2 * kM)});
  const uint64_t eighth = 2 * kM / 8;
  auto thpBits = [&] {  // the accessed-bit checks of the THP: one PMD bit, wherever they land
    for (uint64_t i = 0; i < 8; ++i) rs.observe(kB + i * eighth, true, 0, Mapping::pmd);
  };
  // Evenly: 4 samples in every eighth.
  thpBits();
  for (uint64_t i = 0; i < 32; ++i) rs.observe(kB + (i % 8) * eighth + 4096 * (i / 8), true);
  rs.endInterval();
  REQUIRE(rs.regions().size() == 1);
  CHECK(rs.regions()[0].huge);
  CHECK(rs.regions()[0].skew == Approx(0));
  CHECK(rs.regions()[0].hotEighths == 0xff);
  // All in the third eighth: skewed, and that eighth is the hot part.
  thpBits();
  for (uint64_t i = 0; i < 32; ++i) rs.observe(kB + 2 * eighth + 4096 * i, true);
  rs.endInterval();
  CHECK(rs.regions()[0].skew == Approx(0.875));
  CHECK(rs.regions()[0].hotEighths == 0x04);
  // Accessed bits alone, page faults (once per THP, at its first touch), or too few samples say
  // nothing.
  thpBits();
  for (uint64_t i = 0; i < 8; ++i) rs.observe(kB + i * eighth, true);
  for (uint64_t i = 0; i < 64; ++i) rs.observe(kB, true, -1, Mapping::fault);
  rs.endInterval();
  CHECK(rs.regions()[0].skew == -1);
}

TEST_CASE("a region whose checks find only 4 KiB PTEs for 3 intervals is no longer huge -- its THP was split", "[regions]") {
  config::ProfilerConfig cfg;
  cfg.maxRegions = 1;
  RegionSet rs(cfg);
  rs.rebuild({vma(kB, kB + 2 * kM)});
  rs.observe(kB, true, 0, Mapping::pmd);
  rs.endInterval();
  CHECK(rs.regions()[0].huge);
  rs.observe(kB + 4096, false);  // a sample: says nothing of the mapping
  rs.endInterval();
  CHECK(rs.regions()[0].huge);
  // One interval of 4 KiB PTEs is not enough (a few small pages beside THPs), nor two with a THP
  // seen between them; three in a row are.
  for (int i = 0; i < 2; ++i) {
    rs.observe(kB, true, 0, Mapping::pte);
    rs.endInterval();
    CHECK(rs.regions()[0].huge);
  }
  rs.observe(kB + kM, true, 0, Mapping::pmd);
  rs.endInterval();
  for (uint32_t i = 1; i < RegionSet::kPteOnlyIntervals; ++i) {
    rs.observe(kB, true, 0, Mapping::pte);
    rs.observe(kB + kM, false, 1, Mapping::pte);
    rs.endInterval();
    CHECK(rs.regions()[0].huge);
  }
  rs.observe(kB, true, 0, Mapping::pte);
  rs.endInterval();
  CHECK_FALSE(rs.regions()[0].huge);
}

TEST_CASE("a region a policy moved in part is cut where the move ended and both parts keep its history", "[regions]") {
  OneRegion one(64 * kM);
  RegionSet& rs = one.rs;
  touch(rs, kB, kB + 64 * kM, true, 32);  // evenly hot: nothing splits it
  rs.endInterval();
  REQUIRE(rs.regions().size() == 1);
  const double confidence = rs.regions()[0].confidence;

  CHECK(rs.cutAt(kB + 48 * kM));
  REQUIRE(rs.regions().size() == 2);
  CHECK(rs.regions()[0].end == kB + 48 * kM);
  CHECK(rs.regions()[1].start == kB + 48 * kM);
  CHECK(rs.regions()[1].end == kB + 64 * kM);
  for (const auto& r : rs.regions()) {
    CHECK(r.hotness == Approx(1.0));
    CHECK(r.age == 0);
  }
  CHECK(rs.regions()[0].confidence == Approx(confidence * 0.75));
  CHECK(rs.regions()[1].confidence == Approx(confidence * 0.25));

  CHECK_FALSE(rs.cutAt(kB + 48 * kM));       // a boundary already
  CHECK_FALSE(rs.cutAt(kB + 64 * kM));       // past the end
  CHECK_FALSE(rs.cutAt(kB + 8 * kM + 100));  // not on a page
  one.cfg.maxRegions = 2;
  CHECK_FALSE(rs.cutAt(kB + 8 * kM));  // at max_regions
}

TEST_CASE("memory a mover put on a node is there -- whatever the checks taken before the move said", "[regions]") {
  OneRegion one(64 * kM);
  RegionSet& rs = one.rs;
  for (int i = 0; i < 16; ++i) rs.observe(kB + i * 4 * kM, true, 3);
  rs.endInterval();
  REQUIRE(rs.regions()[0].node == 3);
  REQUIRE(rs.cutAt(kB + 16 * kM));
  REQUIRE(rs.cutAt(kB + 48 * kM));
  rs.observe(kB + 20 * kM, true, 3);  // this interval's check, before the move
  rs.noteNode(kB + 16 * kM, kB + 40 * kM, 0);
  rs.noteNode(kB, kB + 4 * kM, 1);
  rs.endInterval();
  // Each region the moves covered in part is cut at their edges: every part lies on one node.
  REQUIRE(rs.regions().size() == 5);
  const std::vector<std::pair<uint64_t, int>> expected{{kB, 1}, {kB + 4 * kM, 3}, {kB + 16 * kM, 0}, {kB + 40 * kM, 3}, {kB + 48 * kM, 3}};
  for (size_t i = 0; i < expected.size(); ++i) {
    CHECK(rs.regions()[i].start == expected[i].first);
    CHECK(rs.regions()[i].node == expected[i].second);
  }
  rs.observe(kB + 20 * kM, true, 2);  // a later check knows better
  rs.endInterval();
  CHECK(rs.regions()[2].node == 2);

  // Where no cut can be made (at max_regions), a region takes the node of the move that covered
  // half or more of it.
  one.cfg.maxRegions = static_cast<uint32_t>(rs.regions().size());
  rs.noteNode(kB + 4 * kM, kB + 12 * kM, 2);   // 8 of [4, 16) MiB
  rs.noteNode(kB + 40 * kM, kB + 42 * kM, 1);  // 2 MiB of the region from 40 MiB on
  CHECK(rs.regions().size() == one.cfg.maxRegions);
  CHECK(rs.find(kB + 4 * kM)->node == 2);
  CHECK(rs.find(kB + 40 * kM)->node == 3);
}

TEST_CASE("memory a mover found not present is on no node until a check finds a page there", "[regions]") {
  OneRegion one(8 * kM);
  RegionSet& rs = one.rs;
  rs.observe(kB, true, 0);
  rs.endInterval();
  REQUIRE(rs.regions()[0].node == 0);
  rs.noteNode(kB, kB + 8 * kM, -1);  // the planner skips a region on no node
  rs.endInterval();
  CHECK(rs.regions()[0].node == -1);
  rs.observe(kB + kM, true, 1);
  rs.endInterval();
  CHECK(rs.regions()[0].node == 1);
}

TEST_CASE("a THP-backed region is cut on 2 MiB boundaries only", "[regions]") {
  OneRegion one(8 * kM);
  RegionSet& rs = one.rs;
  rs.observe(kB, true, -1, mtm::profiler::Mapping::pmd);
  rs.endInterval();
  REQUIRE(rs.regions()[0].huge);
  CHECK_FALSE(rs.cutAt(kB + kM));
  CHECK(rs.cutAt(kB + 4 * kM));
}
