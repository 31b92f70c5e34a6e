#include <catch2/catch.hpp>

#include <unistd.h>

#include <cerrno>
#include <filesystem>

#include "Run.h"
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

TEST_CASE("KernelFs writes an existing attribute below its root -- a missing one is an error naming it", "[kernelfs]") {
  test::TempDir dir;
  const std::string& root = dir.path();
  std::filesystem::create_directories(root + "/sys/kernel/mm/damon/admin/kdamonds");
  dir.write("sys/kernel/mm/damon/admin/kdamonds/nr_kdamonds", "0\n");
  KernelFs fs(root);
  CHECK(fs.write("/sys/kernel/mm/damon/admin/kdamonds/nr_kdamonds", "1").ok());
  CHECK(fs.read("/sys/kernel/mm/damon/admin/kdamonds/nr_kdamonds").value() == "1");
  auto missing = fs.write("/sys/kernel/mm/damon/admin/kdamonds/0/state", "on");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().errnum() == ENOENT);
  CHECK(missing.error().message() == "write \"on\" to " + root + "/sys/kernel/mm/damon/admin/kdamonds/0/state: No such file or directory");
}

TEST_CASE("a process's CPU time is utime + stime from /proc/PID/stat, past a comm with spaces -- 0 when gone", "[kernelfs]") {
  test::TempDir dir;
  const std::string& root = dir.path();
  std::filesystem::create_directories(root + "/proc/42");
  // Fields 14 and 15 (utime, stime): 30 and 12 ticks.
  dir.write("proc/42/stat", "42 (a (b) c) S 1 42 42 0 -1 4194560 100 0 0 0 30 12 0 0 20 0 1 0 5 1000 10\n");
  const uint64_t tickNs = 1000000000ull / static_cast<uint64_t>(::sysconf(_SC_CLK_TCK));
  CHECK(processCpuNs(KernelFs(root), 42) == 42 * tickNs);
  CHECK(processCpuNs(KernelFs(root), 43) == 0);
}
