#include <catch2/catch.hpp>

#include "mtm/policy/MtmPolicy.h"

using namespace mtm;
using namespace mtm::policy;

namespace {

constexpr uint64_t kMiB = 1 << 20;

// Four tiers of one node each: node i is tier i, `capacity` MiB, `free` MiB free.
config::TierMap tiers(std::vector<std::pair<uint64_t, uint64_t>> capFree) {
  config::TierMap m;
  for (size_t i = 0; i < capFree.size(); ++i) {
    config::Tier t;
    t.index = static_cast<int>(i);
    t.nodes = {static_cast<int>(i)};
    t.capacityBytes = t.totalBytes = capFree[i].first * kMiB;
    t.freeBytes = capFree[i].second * kMiB;
    t.lowWatermark = 0.02;
    t.highWatermark = 0.05;
    m.tiers.push_back(t);
  }
  return m;
}

profiler::RegionInfo region(uint64_t startMiB, uint64_t sizeMiB, double hotness, int tier) {
  profiler::RegionInfo r;
  r.pid = 7;
  r.start = 0x7f0000000000 + startMiB * kMiB;
  r.end = r.start + sizeMiB * kMiB;
  r.hotness = hotness;
  r.node = r.tier = tier;
  return r;
}

config::Config cfg() {
  config::Config c;
  c.profiler.intervalMs = 1000;
  c.policy.cooldownS = 3;
  return c;
}

}  // namespace

TEST_CASE("a hot region in tier 3 goes straight to tier 0", "[policy]") {
  MtmPolicy p(cfg());
  profiler::Snapshot s;
  s.regions = {region(0, 8, 0.9, 3)};
  auto plan = p.plan(s, tiers({{1024, 512}, {1024, 512}, {1024, 512}, {1024, 512}}));
  REQUIRE(plan.moves.size() == 1);
  CHECK(plan.moves[0].toNode == 0);
  CHECK(plan.moves[0].kind == migrate::MoveKind::Promotion);
}

TEST_CASE("to make room, the coldest regions of the top tier go one tier down, not further", "[policy]") {
  MtmPolicy p(cfg());
  profiler::Snapshot s;
  // Tier 0 is full (about 20 MiB free of 1024: below its 2% watermark after any promotion).
  s.regions = {region(0, 64, 0.9, 2), region(100, 64, 0.0, 0), region(200, 64, 0.05, 0), region(300, 64, 0.4, 0)};
  auto plan = p.plan(s, tiers({{1024, 20}, {1024, 512}, {1024, 512}, {1024, 512}}));
  REQUIRE(plan.moves.size() >= 2);
  // The coldest of tier 0 goes to tier 1 (one step), then the hot one comes up to tier 0.
  CHECK(plan.moves[0].kind == migrate::MoveKind::Demotion);
  CHECK(plan.moves[0].ranges[0].start == s.regions[1].start);
  CHECK(plan.moves[0].toNode == 1);
  bool promoted = false;
  for (const auto& m : plan.moves) {
    if (m.kind == migrate::MoveKind::Promotion) {
      CHECK(m.toNode == 0);
      promoted = true;
    }
    CHECK(m.ranges[0].start != s.regions[3].start);  // warm (0.4): neither hot nor cold, stays
  }
  CHECK(promoted);
}

TEST_CASE("a full tier is skipped: the hot region goes to the fastest tier with room", "[policy]") {
  MtmPolicy p(cfg());
  profiler::Snapshot s;
  s.regions = {region(0, 64, 0.9, 3), region(100, 64, 0.8, 0)};  // tier 0 full of warm-hot data
  auto plan = p.plan(s, tiers({{1024, 10}, {1024, 512}, {1024, 512}, {1024, 512}}));
  REQUIRE(plan.moves.size() == 1);
  CHECK(plan.moves[0].toNode == 1);
}

TEST_CASE("hysteresis: promotion needs hot_threshold plus the margin", "[policy]") {
  MtmPolicy p(cfg());
  profiler::Snapshot s;
  s.regions = {region(0, 8, 0.55, 2)};  // hot (>= 0.5) but not by the 0.1 margin
  CHECK(p.plan(s, tiers({{1024, 512}, {1024, 512}, {1024, 512}})).moves.empty());
  s.regions[0].hotness = 0.6;
  CHECK(p.plan(s, tiers({{1024, 512}, {1024, 512}, {1024, 512}})).moves.size() == 1);
}

TEST_CASE("a region that moved stays put for the cooldown", "[policy]") {
  MtmPolicy p(cfg());
  profiler::Snapshot s;
  s.interval = 10;
  s.regions = {region(0, 8, 0.9, 2)};
  auto t = tiers({{1024, 512}, {1024, 512}, {1024, 512}});
  REQUIRE(p.plan(s, t).moves.size() == 1);
  s.interval = 11;  // the snapshot still says tier 2 (say the move failed): within 3 s, no retry
  CHECK(p.plan(s, t).moves.empty());
  s.interval = 13;
  CHECK(p.plan(s, t).moves.size() == 1);
}

TEST_CASE("watermarks: a tier short of free memory sheds its coldest regions one tier down", "[policy]") {
  MtmPolicy p(cfg());
  profiler::Snapshot s;
  s.regions = {region(0, 32, 0.0, 0), region(100, 32, 0.02, 0), region(200, 32, 0.9, 0)};
  // 10 MiB free of 1024: the high watermark (5%) wants ~51 MiB free: two cold regions go.
  auto plan = p.plan(s, tiers({{1024, 10}, {1024, 512}}));
  REQUIRE(plan.moves.size() == 2);
  for (const auto& m : plan.moves) {
    CHECK(m.kind == migrate::MoveKind::Demotion);
    CHECK(m.toNode == 1);
    CHECK(m.ranges[0].start != s.regions[2].start);
  }
}

TEST_CASE("the plan fits the mover's page budget, hottest first", "[policy]") {
  auto c = cfg();
  c.migration.maxPagesPerInterval = 3 * 2048;  // three 8 MiB regions
  MtmPolicy p(c);
  profiler::Snapshot s;
  for (int i = 0; i < 6; ++i) s.regions.push_back(region(uint64_t(i) * 10, 8, 0.7 + 0.05 * i, 2));
  auto plan = p.plan(s, tiers({{4096, 2048}, {1024, 512}, {1024, 512}}));
  REQUIRE(plan.moves.size() == 3);
  CHECK(plan.moves[0].ranges[0].start == s.regions[5].start);  // the hottest
  CHECK(plan.moves[2].ranges[0].start == s.regions[3].start);
}

TEST_CASE("two_tier moves only between the top tier and the next", "[policy]") {
  TwoTierPolicy p(cfg());
  profiler::Snapshot s;
  s.regions = {region(0, 8, 0.9, 1), region(10, 8, 0.0, 0), region(20, 8, 0.9, 3)};
  auto plan = p.plan(s, tiers({{1024, 512}, {1024, 512}, {1024, 512}, {1024, 512}}));
  REQUIRE(plan.moves.size() == 2);
  CHECK(plan.moves[0].toNode == 0);
  CHECK(plan.moves[1].toNode == 1);
}

TEST_CASE("the cooldown stops ping-pong, not a promotion that goes on up once it arrived", "[policy]") {
  MtmPolicy p(cfg());
  profiler::Snapshot s;
  s.interval = 10;
  // Tier 0 has no room: the hot region goes from tier 3 to tier 1.
  s.regions = {region(0, 8, 0.9, 3)};
  auto full = tiers({{1024, 0}, {1024, 512}, {1024, 512}, {1024, 512}});
  auto plan = p.plan(s, full);
  REQUIRE(plan.moves.size() == 1);
  CHECK(plan.moves[0].toNode == 1);
  // It arrived in tier 1 and tier 0 has room now: up again at once, inside the cooldown.
  s.interval = 11;
  s.regions[0].node = s.regions[0].tier = 1;
  plan = p.plan(s, tiers({{1024, 512}, {1024, 512}, {1024, 512}, {1024, 512}}));
  REQUIRE(plan.moves.size() == 1);
  CHECK(plan.moves[0].toNode == 0);
  // Now in tier 0 and suddenly cold, with tier 0 short of room: it may not go down yet.
  s.interval = 12;
  s.regions[0].node = s.regions[0].tier = 0;
  s.regions[0].hotness = 0.0;
  CHECK(p.plan(s, tiers({{1024, 10}, {1024, 512}, {1024, 512}, {1024, 512}})).moves.empty());
  s.interval = 14;  // the 3 s cooldown is over
  REQUIRE(p.plan(s, tiers({{1024, 10}, {1024, 512}, {1024, 512}, {1024, 512}})).moves.size() == 1);
}

TEST_CASE("one global ranking: a hot region displaces a warm one from the top tier, never a near-equal one", "[policy]") {
  MtmPolicy p(cfg());
  profiler::Snapshot s;
  // Tier 0 is short of room, holding a warm region (0.4, above cold_threshold); a 0.9 region
  // waits in tier 2.
  s.regions = {region(0, 64, 0.4, 0), region(100, 64, 0.9, 2)};
  auto plan = p.plan(s, tiers({{1024, 30}, {1024, 512}, {1024, 512}}));
  REQUIRE(plan.moves.size() == 2);
  CHECK(plan.moves[0].kind == migrate::MoveKind::Demotion);
  CHECK(plan.moves[0].ranges[0].start == s.regions[0].start);
  CHECK(plan.moves[0].toNode == 1);
  CHECK(plan.moves[1].toNode == 0);
  // A resident as hot as the newcomer but for less than promote_margin stays; the newcomer goes
  // to the fastest tier with room instead (tier 0's 8 MiB of room is not half of it).
  MtmPolicy q(cfg());
  s.regions = {region(0, 64, 0.85, 0), region(100, 64, 0.9, 2)};
  plan = q.plan(s, tiers({{1024, 30}, {1024, 512}, {1024, 512}}));
  REQUIRE(plan.moves.size() == 1);
  CHECK(plan.moves[0].kind == migrate::MoveKind::Promotion);
  CHECK(plan.moves[0].toNode == 1);
  CHECK(plan.cuts.empty());
}

// What the VM lab showed: a coarse region (its hot part not yet split off from the cold rest)
// bigger than the room tier 0 can make went whole to tier 1 and stayed there.
TEST_CASE("a hot region bigger than the top tier's room fills it and the rest goes to the next tier with room", "[policy]") {
  MtmPolicy p(cfg());
  profiler::Snapshot s;
  s.interval = 10;
  s.regions = {region(0, 224, 0.9, 3)};
  s.regions[0].start += 4096;  // not 2 MiB-aligned: the cut falls on a 2 MiB boundary
  // Tier 0: 150 MiB free of 256, 5 MiB of it the low watermark; tier 1 full.
  auto t = tiers({{256, 150}, {1024, 10}, {1024, 512}, {1024, 512}});
  auto plan = p.plan(s, t);
  REQUIRE(plan.moves.size() == 2);
  const uint64_t cut = (s.regions[0].start + 144 * kMiB) & ~(2 * kMiB - 1);
  CHECK(plan.moves[0].toNode == 0);
  CHECK(plan.moves[0].ranges == std::vector<migrate::AddressRange>{{s.regions[0].start, cut}});
  CHECK(plan.moves[1].toNode == 2);  // tier 1 has no room
  CHECK(plan.moves[1].ranges == std::vector<migrate::AddressRange>{{cut, s.regions[0].end}});
  // The profiler cuts the region there: the part left in tier 2 is ranked on its own.
  REQUIRE(plan.cuts.size() == 1);
  CHECK(plan.cuts[0].pid == 7);
  CHECK(plan.cuts[0].addr == cut);
  // The region is remembered by its first part: should its checks place it in tier 2 next
  // interval, it is not moved again within the cooldown.
  s.interval = 11;
  s.regions[0].tier = s.regions[0].node = 2;
  CHECK(p.plan(s, t).moves.empty());

  // Where no tier has room for the rest, only the first part moves.
  MtmPolicy q(cfg());
  s.interval = 10;
  s.regions[0].tier = s.regions[0].node = 3;
  plan = q.plan(s, tiers({{256, 150}, {1024, 10}, {1024, 10}, {1024, 512}}));
  REQUIRE(plan.moves.size() == 1);
  CHECK(plan.moves[0].ranges == std::vector<migrate::AddressRange>{{s.regions[0].start, cut}});
}

TEST_CASE("when the kernel finds a tier full, a move falls back to the next tier on its way, never past it", "[policy]") {
  MtmPolicy p(cfg());
  profiler::Snapshot s;
  s.regions = {region(0, 8, 0.9, 3), region(100, 8, 0.0, 0)};
  // Tier 0 needs to shed (watermark) and has room for the promotion after that.
  auto plan = p.plan(s, tiers({{1024, 40}, {1024, 512}, {1024, 512}, {1024, 512}}));
  REQUIRE(plan.moves.size() == 2);
  for (const auto& m : plan.moves) {
    if (m.kind == migrate::MoveKind::Promotion) {
      CHECK(m.toNode == 0);
      CHECK(m.fallbackNodes == std::vector<int>{1, 2});  // up to, not including, its own tier 3
    } else {
      CHECK(m.toNode == 1);
      CHECK(m.fallbackNodes == std::vector<int>{2, 3});
    }
  }
}

namespace {

// A THP-backed region, with the skew and hot eighths samples gave it.
profiler::RegionInfo thp(uint64_t startMiB, uint64_t sizeMiB, double hotness, int tier, double skew, uint8_t hotEighths) {
  profiler::RegionInfo r = region(startMiB, sizeMiB, hotness, tier);
  r.huge = true;
  r.skew = skew;
  r.hotEighths = hotEighths;
  r.confidence = 8;
  return r;
}

}  // namespace

TEST_CASE("THPs: evenly hot ones move whole, skewed ones split and only the hot part moves", "[policy]") {
  MtmPolicy p(cfg());  // thp_split_skew 0.5
  profiler::Snapshot s;
  s.regions = {thp(0, 2, 0.9, 3, 0.0, 0xff), thp(10, 2, 0.9, 3, 0.75, 0x06), thp(20, 2, 0.9, 3, -1, 0)};
  auto plan = p.plan(s, tiers({{1024, 512}, {1024, 512}, {1024, 512}, {1024, 512}}));
  REQUIRE(plan.moves.size() == 3);
  for (const auto& m : plan.moves) CHECK(m.toNode == 0);
  // Even: whole, not split.
  CHECK(plan.moves[0].ranges == std::vector<migrate::AddressRange>{{s.regions[0].start, s.regions[0].end}});
  CHECK_FALSE(plan.moves[0].splitPartialThps);
  // Skewed (eighths 1 and 2 hot): those 512 KiB only, the THP split around them.
  const uint64_t eighth = 2 * kMiB / 8;
  CHECK(plan.moves[1].ranges == std::vector<migrate::AddressRange>{{s.regions[1].start + eighth, s.regions[1].start + 3 * eighth}});
  CHECK(plan.moves[1].splitPartialThps);
  // Unknown skew (accessed bits only): whole.
  CHECK_FALSE(plan.moves[2].splitPartialThps);
  CHECK(plan.collapses.empty());
}

TEST_CASE("THPs: a split one is collapsed once its parts share a node and are about as hot", "[policy]") {
  MtmPolicy p(cfg());  // thp_collapse_skew 0.1
  auto t = tiers({{1024, 512}, {1024, 512}, {1024, 512}, {1024, 512}});
  profiler::Snapshot s;
  s.regions = {thp(10, 2, 0.9, 3, 0.75, 0x06)};
  REQUIRE(p.plan(s, t).moves.size() == 1);
  // Split: the hot 512 KiB in tier 0, the rest in tier 3 -- skewed still, nothing to collapse.
  const uint64_t base = s.regions[0].start, eighth = 2 * kMiB / 8;
  auto part = [&](int64_t from, int64_t to, double hotness, int tier) {
    profiler::RegionInfo r = region(0, 0, hotness, tier);
    r.start = base + static_cast<uint64_t>(from * static_cast<int64_t>(eighth));
    r.end = base + static_cast<uint64_t>(to * static_cast<int64_t>(eighth));
    r.confidence = 8;
    return r;
  };
  s.interval = 1;
  s.regions = {part(0, 1, 0.1, 3), part(1, 3, 0.9, 0), part(3, 8, 0.1, 3)};
  CHECK(p.plan(s, t).collapses.empty());
  // All of it on node 0 now, but unevenly hot: not yet.
  s.interval = 2;
  s.regions = {part(0, 1, 0.5, 0), part(1, 3, 0.9, 0), part(3, 8, 0.5, 0)};
  CHECK(p.plan(s, t).collapses.empty());
  // Evenly hot on one node: collapsed, once. Its neighbours (cold, elsewhere, touching it on
  // both sides) are not part of it.
  s.interval = 3;
  s.regions = {part(-8, 0, 0.0, 3), part(0, 1, 0.85, 0), part(1, 3, 0.9, 0), part(3, 8, 0.82, 0), part(8, 16, 0.0, 2)};
  auto plan = p.plan(s, t);
  REQUIRE(plan.collapses.size() == 1);
  CHECK(plan.collapses[0].pid == 7);
  CHECK(plan.collapses[0].ranges == std::vector<migrate::AddressRange>{{base, base + 2 * kMiB}});
  s.interval = 4;
  CHECK(p.plan(s, t).collapses.empty());
}

TEST_CASE("THPs: a split one whose process exited is forgotten", "[policy]") {
  MtmPolicy p(cfg());
  auto t = tiers({{1024, 512}, {1024, 512}, {1024, 512}, {1024, 512}});
  profiler::Snapshot s;
  s.regions = {thp(10, 2, 0.9, 3, 0.75, 0x06)};
  REQUIRE(p.plan(s, t).moves.size() == 1);
  s.interval = 1;
  s.exited = {7};
  s.regions = {};
  CHECK(p.plan(s, t).collapses.empty());
  // Same pid and addresses again (a new process): evenly hot regions are nothing to collapse.
  s.exited = {};
  s.regions = {region(10, 2, 0.9, 0)};
  s.regions[0].confidence = 8;
  CHECK(p.plan(s, t).collapses.empty());
}
