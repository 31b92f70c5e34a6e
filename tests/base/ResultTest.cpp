#include <catch2/catch.hpp>

#include <cerrno>

#include "mtm/KernelFs.h"
#include "mtm/Result.h"

using namespace mtm;

namespace {
Result<int> failing() { return Error::fromErrno("read /proc/42/maps", ESRCH); }
Result<int> caller() { return failing().context("scanning pid 42"); }
}  // namespace

TEST_CASE("errors gather context on the way up and remember where they were made", "[result]") {
  auto r = caller();
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message() == "read /proc/42/maps: No such process -- while scanning pid 42");
  CHECK(r.error().errnum() == ESRCH);
  CHECK(std::string(r.error().file()).find("ResultTest.cpp") != std::string::npos);
  Result<int> ok = 7;
  CHECK(ok.valueOr(3) == 7);
  CHECK(r.valueOr(3) == 3);
  Status done;
  CHECK(done.ok());
}

TEST_CASE("KernelFs reads below its root and reports missing files with errno", "[kernelfs]") {
  KernelFs fs(MTM_SOURCE_DIR "/tests/fixtures/vm-6.12-4node-hmat");
  CHECK(fs.read("/sys/devices/system/node/online").value() == "0-3\n");
  CHECK(fs.list("/sys/devices/virtual/memory_tiering").value() ==
        std::vector<std::string>{"memory_tier180", "memory_tier20", "memory_tier4", "memory_tier63"});
  auto missing = fs.read("/sys/nope");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().errnum() == ENOENT);
  CHECK(missing.error().message().find("tests/fixtures/vm-6.12-4node-hmat/sys/nope: No such file or directory") != std::string::npos);
  CHECK_FALSE(fs.live());
  CHECK(KernelFs().live());
}
