#include <catch2/catch.hpp>

#include "mtm/Registry.h"
#include "mtm/daemon/Plugins.h"
#include "mtm/migrate/Mover.h"
#include "mtm/policy/Policy.h"
#include "mtm/profiler/Source.h"

using namespace mtm;

TEST_CASE("every role registers a no-op named none", "[registry]") {
  REQUIRE(Registry<profiler::Source>::create("none").ok());
  CHECK(Registry<profiler::Source>::create("none").value()->probe().ok());
  auto policy = Registry<policy::Policy>::create("none");
  REQUIRE(policy.ok());
  profiler::Snapshot snap;
  snap.regions.push_back({1, 0, 4096, 1.0, 3});
  CHECK((*policy)->plan(snap, config::TierMap{}).moves.empty());
  auto mover = Registry<migrate::Mover>::create("none");
  REQUIRE(mover.ok());
  policy::Plan plan{{{1, 0, 8192, 0}}};
  auto stats = (*mover)->execute(plan);
  CHECK(stats.pagesRequested == 2);
  CHECK(stats.pagesMoved == 0);
}

TEST_CASE("an unknown plugin name lists the known ones", "[registry]") {
  auto r = Registry<policy::Policy>::create("magic");
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message() == "unknown policy \"magic\" (known: none)");
  CHECK(daemon::listPlugins() ==
        "profiler sources:\n  none            samples nothing (every region stays cold)\n"
        "policies:\n  none            first touch: plans no moves (baseline)\n"
        "movers:\n  none            moves nothing (observation only)\n");
}
