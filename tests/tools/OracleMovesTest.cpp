#include <catch2/catch.hpp>

#include "HotSetScore.h"

using mtm::bench::HotPhase;
using mtm::bench::oracleMoves;

namespace {

std::vector<HotPhase> phases(std::vector<std::set<uint64_t>> hot) {
  std::vector<HotPhase> out;
  for (auto& h : hot) out.push_back({0, h});
  return out;
}

}  // namespace

TEST_CASE("the oracle moves each hot set up once and only what room demands down", "[bench]") {
  // Room for both hot sets: each goes up once, nothing down, a recurrence costs nothing.
  auto m = oracleMoves(phases({{0, 1}, {2, 3}, {0, 1}}), 4);
  CHECK(m.up == 4);
  CHECK(m.down == 0);
  // Room for one: every phase swaps.
  m = oracleMoves(phases({{0, 1}, {2, 3}, {0, 1}}), 2);
  CHECK(m.up == 6);
  CHECK(m.down == 4);
  // A hot set bigger than the room: as much of it as fits.
  m = oracleMoves(phases({{0, 1, 2}}), 2);
  CHECK(m.up == 2);
  CHECK(m.down == 0);
}

TEST_CASE("the oracle evicts what is needed again latest (Belady)", "[bench]") {
  // Room 2: at phase 1 one of 0 and 1 must go; 0 is needed at phase 2, 1 only at phase 3, so 1
  // goes and phase 2 costs nothing.
  auto m = oracleMoves(phases({{0, 1}, {2}, {0}, {1}}), 2);
  CHECK(m.up == 4);
  CHECK(m.down == 2);
}
