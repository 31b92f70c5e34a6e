#include <catch2/catch.hpp>

#include <random>

#include "mtm/profiler/OverheadController.h"

using mtm::profiler::OverheadController;

TEST_CASE("the controller holds a synthetic cost within 20% of the budget", "[controller]") {
  // 0.5% of one core at 1 s intervals: 5 ms. Cost: 200 us fixed + 1.5 us a check, +-10% noise.
  OverheadController c(0.005, 1000);
  std::mt19937 rng(1);
  std::uniform_real_distribution<double> noise(0.9, 1.1);
  auto cost = [&](uint64_t checks, double perCheckUs) {
    return static_cast<uint64_t>((200e3 + perCheckUs * 1e3 * double(checks)) * noise(rng));
  };
  for (int i = 0; i < 10; ++i) c.report(c.checks(), cost(c.checks(), 1.5));
  for (int i = 0; i < 20; ++i) {
    const uint64_t spent = cost(c.checks(), 1.5);
    CHECK(double(spent) <= 1.2 * double(c.budgetNs()));
    CHECK(double(spent) >= 0.8 * double(c.budgetNs()));
    c.report(c.checks(), spent);
  }
  // Checks get three times dearer (a busier target): it follows.
  for (int i = 0; i < 10; ++i) c.report(c.checks(), cost(c.checks(), 4.5));
  const uint64_t spent = cost(c.checks(), 4.5);
  CHECK(double(spent) <= 1.2 * double(c.budgetNs()));
  CHECK(double(spent) >= 0.8 * double(c.budgetNs()));
}

TEST_CASE("the controller never jumps more than 2x up in one interval, and stays within bounds", "[controller]") {
  OverheadController c(0.01, 1000, 16, 1000);
  const uint64_t before = c.checks();
  c.report(before, 1);  // absurdly cheap
  CHECK(c.checks() <= std::min<uint64_t>(2 * before, 1000));
  for (int i = 0; i < 20; ++i) c.report(c.checks(), 1000000000);  // absurdly dear
  CHECK(c.checks() == 16);
}
