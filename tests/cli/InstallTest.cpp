// cmake --install: binaries, the systemd unit and /etc/mtm/mtm.yaml land where the unit expects
// them, an admin's config survives a reinstall, and systemd accepts the unit.
#include <catch2/catch.hpp>

#include <filesystem>

#include "Run.h"

using mtm::test::readFile;
using mtm::test::run;

TEST_CASE("cmake --install puts mtmd, mtmctl, the unit and the config in place and keeps an edited config", "[install][host]") {
  mtm::test::TempDir dest;
  const std::string build = MTM_BIN_DIR "/..";
  auto first = run({"/usr/bin/env", "DESTDIR=" + dest.path(), "cmake", "--install", build, "--prefix", "/usr/local"});
  INFO(first.out << first.err);
  REQUIRE(first.exitCode == 0);
  const std::string root = dest.path();
  CHECK(std::filesystem::exists(root + "/usr/local/sbin/mtmd"));
  CHECK(std::filesystem::exists(root + "/usr/local/bin/mtmctl"));
  CHECK(std::filesystem::exists(root + "/usr/local/include/cxlccl.h"));
  CHECK(std::filesystem::exists(root + "/usr/local/bin/cxlccl-pool"));
  CHECK(readFile(root + "/etc/mtm/mtm.yaml") == readFile(mtm::test::sourceDir() + "/config/mtm.yaml"));
  const auto unit = readFile(root + "/lib/systemd/system/mtmd.service");
  CHECK(unit.find("ExecStart=/usr/local/sbin/mtmd --config /etc/mtm/mtm.yaml\n") != std::string::npos);
  CHECK(unit.find("Type=notify\n") != std::string::npos);
  CHECK(unit.find("CapabilityBoundingSet=CAP_SYS_PTRACE CAP_SYS_NICE CAP_BPF CAP_PERFMON\n") != std::string::npos);

  dest.write("etc/mtm/mtm.yaml", "policy:\n  name: none\n");
  auto again = run({"/usr/bin/env", "DESTDIR=" + dest.path(), "cmake", "--install", build, "--prefix", "/usr/local"});
  CHECK(again.exitCode == 0);
  CHECK(again.out.find("Keeping: " + root + "/etc/mtm/mtm.yaml") != std::string::npos);
  CHECK(readFile(root + "/etc/mtm/mtm.yaml") == "policy:\n  name: none\n");

  if (!std::filesystem::exists("/usr/bin/systemd-analyze")) {
    WARN("systemd-analyze missing: the unit's syntax is not verified");
    return;
  }
  // Verify the unit as installed, pointed at this build's binary and the default config.
  std::string local = unit;
  local.replace(local.find("/usr/local/sbin/mtmd"), 20, MTM_BIN_DIR "/mtmd");
  local.replace(local.find("/etc/mtm/mtm.yaml"), 17, mtm::test::sourceDir() + "/config/mtm.yaml");
  auto path = dest.write("mtmd.service", local);
  auto verify = run({"/usr/bin/systemd-analyze", "verify", path});
  INFO(verify.out << verify.err);
  CHECK(verify.exitCode == 0);
}
