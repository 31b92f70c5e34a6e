#include <catch2/catch.hpp>

#include "mtm/profiler/ClearCost.h"

using mtm::profiler::ClearCost;

namespace {

constexpr uint64_t kMib = 1ull << 20;

// Clears of 10-60 iovecs over 1-40 MiB on a machine where an iovec costs `iovecNs` and a MiB
// `mibNs`.
void clearsOn(ClearCost& cost, double iovecNs, double mibNs, int clears) {
  for (int i = 0; i < clears; ++i) {
    const uint64_t iovecs = 10 + (i * 7) % 50, mib = 1 + (i * 13) % 40;
    cost.record(iovecs, mib * kMib, static_cast<uint64_t>(iovecNs * double(iovecs) + mibNs * double(mib)));
  }
}

}  // namespace

TEST_CASE("with no clear seen the merge gap is the host's: about 3 MiB", "[profiler][clear-cost]") {
  ClearCost cost;
  CHECK(cost.mergeGap() == ClearCost::kMaxGap);
}

TEST_CASE("the clears teach what an iovec and a MiB cost here, and the gap follows", "[profiler][clear-cost]") {
  ClearCost cost;
  SECTION("emulation: bytes dear, gaps a fifth of a MiB") {
    clearsOn(cost, 36000, 180000, 40);
    CHECK(cost.iovecNs() == Approx(36000).epsilon(0.05));
    CHECK(cost.mibNs() == Approx(180000).epsilon(0.05));
    CHECK(cost.mergeGap() == Approx(kMib / 5).epsilon(0.05));
  }
  SECTION("hardware: bytes cheap, gaps as wide as the cap") {
    clearsOn(cost, 25000, 4000, 40);
    CHECK(cost.mergeGap() == ClearCost::kMaxGap);
  }
  SECTION("a machine that changes: the recent clears count") {
    clearsOn(cost, 25000, 4000, 40);
    clearsOn(cost, 10000, 200000, 60);
    CHECK(cost.mergeGap() < kMib / 10);
  }
}

TEST_CASE("a clear that cost nothing per MiB bridges gaps up to the cap, never beyond", "[profiler][clear-cost]") {
  ClearCost cost;
  clearsOn(cost, 50000, 0, 40);
  CHECK(cost.mergeGap() == ClearCost::kMaxGap);
}
