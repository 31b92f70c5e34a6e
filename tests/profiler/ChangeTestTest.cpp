#include <catch2/catch.hpp>
#include <random>

#include "mtm/profiler/ChangeTest.h"
#include "mtm/profiler/Regions.h"

using namespace mtm;
using namespace mtm::profiler;

namespace {

// Intervals of `checks` checks each, every one accessed or none; returns the interval (from 1)
// whose checks completed a change, or 0.
int changeAt(CheckHistory& h, int intervals, uint32_t checks, bool accessed) {
  for (int i = 1; i <= intervals; ++i)
    if (h.note(checks, accessed ? checks : 0)) return i;
  return 0;
}

// Intervals with one check each, accessed with probability p; the share of them that changed.
double changeRate(double p, int intervals, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::bernoulli_distribution hit(p);
  CheckHistory h;
  int changes = 0;
  for (int i = 0; i < intervals; ++i) changes += h.note(1, hit(rng) ? 1 : 0);
  return double(changes) / intervals;
}

}  // namespace

TEST_CASE("a run of checks that breaks with a settled history is a change", "[regions][change]") {
  CheckHistory h;
  REQUIRE(changeAt(h, 20, 1, true) == 0);  // accessed at every check: nothing to tell yet
  CHECK(changeAt(h, 5, 1, false) == 2);    // the first miss may be chance, the second is not
  CHECK_FALSE(h.runAccessed);
  CHECK(h.hits == 0);
  CHECK(h.misses == 2);  // the history starts again from the run
  // And back: the new history is short, so it takes longer the other way than two checks.
  CHECK(changeAt(h, 10, 1, true) > 2);
}

TEST_CASE("many checks an interval tell a change within one interval", "[regions][change]") {
  CheckHistory h;
  REQUIRE(changeAt(h, 10, 20, true) == 0);
  CHECK(changeAt(h, 1, 20, false) == 1);
}

TEST_CASE("no change without history, from one check, or from a mixed interval", "[regions][change]") {
  CheckHistory fresh;
  CHECK(changeAt(fresh, 1, 4, false) == 0);  // nothing before the run to break with
  CheckHistory h;
  REQUIRE(changeAt(h, 50, 4, true) == 0);
  CHECK_FALSE(h.note(1, 0));  // one check alone, however long the history
  CheckHistory mixed;
  REQUIRE(changeAt(mixed, 50, 4, true) == 0);
  CHECK_FALSE(mixed.note(10, 1));  // nine misses in ten: the region may be half hot now, not a run
}

TEST_CASE("steady access at any rate is rarely called a change", "[regions][change]") {
  // One check an interval (the VM lab's share): a run that long by chance is rare at any rate.
  for (double p : {0.05, 0.2, 0.5, 0.8, 0.95}) {
    INFO("accessed with probability " << p);
    CHECK(changeRate(p, 10000, 42) < 0.01);
  }
  CHECK(changeRate(1.0, 1000, 1) == 0);
  CHECK(changeRate(0.0, 1000, 1) == 0);
}

namespace {

// Two 2 MiB regions, 64 MiB apart: one to watch, and one that the process keeps touching.
struct TwoRegions {
  config::ProfilerConfig cfg;  // hotness_decay 0.5
  RegionSet rs{cfg};
  uint64_t watched = 0x7f0000000000, busy = watched + (64 << 20);
  TwoRegions() {
    Vma a, b;
    a.start = watched;
    b.start = busy;
    a.end = a.start + (2 << 20);
    b.end = b.start + (2 << 20);
    a.perms = b.perms = "rw-p";
    rs.rebuild({a, b});
  }
  RegionStats interval(bool watchedAccessed, bool busyAccessed = true) {
    rs.observe(watched, watchedAccessed);
    rs.observe(busy, busyAccessed);
    return rs.endInterval();
  }
  const Region& region() { return *rs.find(watched); }
};

}  // namespace

TEST_CASE("a region's hotness follows a change at once", "[regions][change]") {
  TwoRegions p;
  for (int i = 0; i < 20; ++i) p.interval(true);
  REQUIRE(p.region().hotness > 0.99);
  CHECK(p.interval(false).changes == 0);
  CHECK(p.region().hotness == Approx(0.5));  // one miss: the decayed mean
  CHECK(p.interval(false).changes == 1);
  CHECK(p.region().hotness == 0);  // the decayed mean would still read 0.25
  CHECK(p.region().confidence == 2);
}

TEST_CASE("an interval in which no check of the process found an access is no change", "[regions][change]") {
  // The process did not run in the window (it waited on a move): every region misses at once.
  TwoRegions p;
  for (int i = 0; i < 20; ++i) p.interval(true);
  CHECK(p.interval(false, false).changes == 0);
  CHECK(p.interval(false, false).changes == 0);
  CHECK(p.region().hotness == Approx(0.25));  // the decayed mean, as without the change test
  // Running again, it hits: the stall left no run behind.
  CHECK(p.interval(true).changes == 0);
  CHECK(p.region().hotness == Approx(0.625));
}

TEST_CASE("page-fault samples feed the decayed mean but never a change", "[regions][change]") {
  // A move catches a few pages of a cold region in use: the process faults on them in a burst.
  TwoRegions p;
  for (int i = 0; i < 20; ++i) p.interval(false);
  REQUIRE(p.region().hotness < 0.01);
  for (int i = 0; i < 5; ++i) p.rs.observe(p.watched + i * 4096, true, -1, Mapping::fault);
  p.rs.observe(p.busy, true);
  CHECK(p.rs.endInterval().changes == 0);
  CHECK(p.region().hotness == Approx(0.5).margin(0.01));  // the decayed mean, as before
  // The same five hits from accessed bits are a change.
  TwoRegions q;
  for (int i = 0; i < 20; ++i) q.interval(false);
  for (int i = 0; i < 5; ++i) q.rs.observe(q.watched + i * 4096, true, -1, Mapping::pte);
  q.rs.observe(q.busy, true);
  CHECK(q.rs.endInterval().changes == 1);
  CHECK(q.region().hotness == 1);
}
