#include <catch2/catch.hpp>

#include <map>

#include "mtm/profiler/CheckPick.h"

using namespace mtm;
using namespace mtm::profiler;

namespace {

constexpr uint64_t kB = 0x7f0000000000, kM = 1 << 20;

// `n` settled 8 MiB regions side by side, as many as the budget's checks and more.
struct Regions {
  config::ProfilerConfig cfg;
  RegionSet rs{cfg};
  explicit Regions(int n) {
    for (int i = 0; i < n; ++i) {
      Region r;
      r.start = kB + uint64_t(i) * 8 * kM;
      r.end = r.start + 8 * kM;
      rs.regions().push_back(r);
    }
  }
};

}  // namespace

TEST_CASE("with fewer checks than regions every region is checked in turn -- none is left out interval after interval", "[checks]") {
  Regions many(25);
  std::mt19937_64 rng(7);
  std::map<uint64_t, int> checkedIn;  // region start -> intervals with a check
  const int intervals = 400;
  for (int i = 0; i < intervals; ++i) {
    auto picks = pickChecks(many.rs, 16, rng);
    CHECK(picks.size() == 16);
    std::map<uint64_t, bool> seen;
    for (uint64_t a : picks) seen[many.rs.find(a)->start] = true;
    for (const auto& [start, yes] : seen) ++checkedIn[start];
  }
  REQUIRE(checkedIn.size() == 25);
  // Each holds 16/25 of a check an interval: checked in about 64% of the intervals.
  for (const auto& [start, n] : checkedIn) {
    INFO("region at +" << (start - kB) / kM << " MiB");
    CHECK(n > intervals * 0.5);
    CHECK(n < intervals * 0.8);
  }
}

// Spread evenly, a budget below the region count checked a 4 KiB stack as often as a 72 MiB
// region a new hot set had moved into (VM lab).
TEST_CASE("with fewer checks than regions half still go by size and variation", "[checks]") {
  Regions many(25);
  auto& rs = many.rs.regions();
  rs[0].end = rs[0].start + 4 * kM;  // one region is half the size of the others
  rs[12].variation = 1;              // one varies, the others do not
  std::mt19937_64 rng(11);
  std::map<uint64_t, int> checks;  // region start -> checks over the intervals
  const int intervals = 400;
  for (int i = 0; i < intervals; ++i)
    for (uint64_t a : pickChecks(many.rs, 16, rng)) ++checks[many.rs.find(a)->start];
  REQUIRE(checks.size() == 25);
  // 16 checks: 8 one a region (0.32 each), 4 by size, 4 by variation -- all to the varying one.
  const double settled = double(checks[rs[1].start]) / intervals, varying = double(checks[rs[12].start]) / intervals,
               small = double(checks[rs[0].start]) / intervals;
  CHECK(settled == Approx(0.32 + 4.0 * 8 / 196).margin(0.1));
  CHECK(varying == Approx(0.32 + 4.0 * 8 / 196 + 4).margin(0.3));
  CHECK(small == Approx(0.32 + 4.0 * 4 / 196).margin(0.1));
}

TEST_CASE("a small region's share beyond its pages goes to the others: the budget is spent whole", "[checks]") {
  Regions many(25);
  auto& stack = many.rs.regions().back();
  stack.end = stack.start + 2 * kPage;  // two pages, and the only region that varies
  stack.variation = 1;
  std::mt19937_64 rng(5);
  for (int i = 0; i < 100; ++i) {
    const auto picks = pickChecks(many.rs, 16, rng);
    CHECK(picks.size() == 16);
  }
}

TEST_CASE("checks beyond one a region go half by size and half by variation, within each region's pages", "[checks]") {
  Regions two(2);
  two.rs.regions()[1].variation = 1;  // the second varies, the first does not
  std::mt19937_64 rng(3);
  auto picks = pickChecks(two.rs, 202, rng);
  REQUIRE(picks.size() == 202);
  int second = 0;
  for (uint64_t a : picks) {
    CHECK(a % kPage == 0);
    second += a >= kB + 8 * kM;
  }
  CHECK(second == 1 + 50 + 100);  // its one, half the size half, all the variation half
}
