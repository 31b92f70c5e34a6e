#include <catch2/catch.hpp>

#include <cerrno>

#include "mtm/daemon/Manager.h"

TEST_CASE("failed pages are told by errno, most first", "[daemon]") {
  CHECK(mtm::daemon::describeFailures({}) == "");
  CHECK(mtm::daemon::describeFailures({{EBUSY, 12}, {ENOMEM, 300}, {EACCES, 1}}) == "ENOMEM 300, EBUSY 12, EACCES 1");
}
