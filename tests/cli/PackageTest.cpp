// tools/package: cpack's three .deb packages pass lintian's errors and unpack into a scratch dpkg
// root, where the files are where Debian wants them and the tools run.
#include <catch2/catch.hpp>

#include <filesystem>

#include "Run.h"

using mtm::test::readFile;
using mtm::test::run;

TEST_CASE("the .deb packages pass lintian and unpack into a scratch root", "[package][host]") {
  mtm::test::TempDir out, root;
  auto package = run({mtm::test::sourceDir() + "/tools/package", MTM_BIN_DIR "/..", out.path() + "/debs"});
  INFO(package.out << package.err);
  REQUIRE(package.exitCode == 0);
  const std::string debs = out.path() + "/debs/";
  for (const std::string name : {"mtm", "libcxlccl", "libcxlccl-dev"})
    REQUIRE(std::filesystem::exists(debs + name + "_" MTM_VERSION "_amd64.deb"));

  // An empty dpkg database; --unpack runs no maintainer script (none could run chrooted here).
  for (const std::string dir : {"/var/lib/dpkg/info", "/var/lib/dpkg/updates", "/var/lib/dpkg/triggers"})
    std::filesystem::create_directories(root.path() + dir);
  root.write("var/lib/dpkg/status", "");
  auto unpack = run({"/usr/bin/dpkg", "--root=" + root.path(), "--force-depends", "--unpack", debs + "mtm_" MTM_VERSION "_amd64.deb",
                     debs + "libcxlccl_" MTM_VERSION "_amd64.deb", debs + "libcxlccl-dev_" MTM_VERSION "_amd64.deb"});
  INFO(unpack.out << unpack.err);
  REQUIRE(unpack.exitCode == 0);
  const std::string r = root.path();
  // mtm has no maintainer script: configuring it puts its conffile in place.
  auto configure = run({"/usr/bin/dpkg", "--root=" + r, "--force-depends", "--configure", "mtm"});
  INFO(configure.out << configure.err);
  CHECK(configure.exitCode == 0);
  CHECK(std::filesystem::exists(r + "/usr/sbin/mtmd"));
  CHECK(std::filesystem::exists(r + "/usr/share/man/man5/mtm.yaml.5.gz"));
  CHECK(std::filesystem::exists(r + "/usr/include/cxlccl.h"));
  CHECK(readFile(r + "/lib/systemd/system/mtmd.service").find("ExecStart=/usr/sbin/mtmd --config /etc/mtm/mtm.yaml\n") !=
        std::string::npos);
  auto conffiles = run({"/usr/bin/dpkg-query", "--admindir=" + r + "/var/lib/dpkg", "-W", "-f=${Conffiles}", "mtm"});
  CHECK(conffiles.out.find("/etc/mtm/mtm.yaml ") != std::string::npos);
  auto depends = run({"/usr/bin/dpkg-query", "--admindir=" + r + "/var/lib/dpkg", "-W", "-f=${Depends}", "libcxlccl-dev"});
  CHECK(depends.out == "libcxlccl (= " MTM_VERSION ")");
  // The packaged tools find the packaged library (RUNPATH) and mtmctl reads the packaged config.
  auto perf = run({"/usr/bin/env", "-u", "LD_LIBRARY_PATH", r + "/usr/bin/cxlccl-perf", "--version"});
  CHECK(perf.out == "cxlccl-perf " MTM_VERSION "\n");
  auto check = run({r + "/usr/bin/mtmctl", "config", "check", r + "/etc/mtm/mtm.yaml"});
  INFO(check.err);
  CHECK(check.exitCode == 0);
}
