#include <catch2/catch.hpp>

#include "../migrate/FakeKernel.h"
#include "mtm/Registry.h"
#include "mtm/daemon/Plugins.h"
#include "mtm/migrate/Mover.h"
#include "mtm/policy/Policy.h"
#include "mtm/profiler/Source.h"

using namespace mtm;

TEST_CASE("every role registers a no-op named none", "[registry]") {
  const config::Config cfg;
  auto source = Registry<profiler::Source>::create("none", {cfg});
  REQUIRE(source.ok());
  CHECK((*source)->probe().ok());
  auto policy = Registry<policy::Policy>::create("none", {cfg});
  REQUIRE(policy.ok());
  profiler::Snapshot snap;
  snap.regions.push_back({1, 0, 4096, 1.0, 0, 1.0, 3, 0, false});
  CHECK((*policy)->plan(snap, config::TierMap{}).moves.empty());

  test::FakeKernel kernel;
  test::FakeClock clock;
  KernelFs fs;
  auto mover = Registry<migrate::Mover>::create("none", {{kernel, kernel, fs, clock}, {}});
  REQUIRE(mover.ok());
  MoveRequest req;
  req.pid = 1;
  req.ranges = {{0, 8192}};
  req.toNode = 0;
  auto stats = (*mover)->execute({req});
  CHECK(stats.pagesRequested == 2);
  CHECK(stats.pagesDeferred == 2);
  CHECK(stats.pagesMoved == 0);
  CHECK(kernel.calls.empty());
}

TEST_CASE("an unknown plugin name lists the known ones", "[registry]") {
  const config::Config cfg;
  auto r = Registry<policy::Policy>::create("magic", {cfg});
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message() == "unknown policy \"magic\" (known: mtm, none, two_tier)");
  const std::string list = daemon::listPlugins();
  CHECK(list.rfind("profiler sources:\n", 0) == 0);
  CHECK(list.find("\n  none            first touch: plans no moves (baseline)\n") != std::string::npos);
  CHECK(list.find("policies:\n  mtm             MTM: global ranking") != std::string::npos);
  CHECK(list.find("movers:\n  move_pages      move_pages(2)") != std::string::npos);
  CHECK(list.find("\n  none            moves nothing (observation only)\n") != std::string::npos);
}
