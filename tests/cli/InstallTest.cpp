// cmake --install: binaries, the systemd unit and the config land where the install prefix (given
// at install time) puts them, an admin's config survives a reinstall, systemd accepts the unit;
// the installed tools find libcxlccl, other projects find it by CMake or pkg-config; man pages
// and mtmctl's bash completion are installed and work.
#include <catch2/catch.hpp>

#include <filesystem>

#include "Run.h"

using mtm::test::readFile;
using mtm::test::run;
using mtm::test::TempDir;

namespace {

const std::string kBuild = MTM_BIN_DIR "/..";

// Installs this build under DESTDIR=dest with --prefix prefix.
mtm::test::RunResult install(const TempDir& dest, const std::string& prefix) {
  auto r = run({"/usr/bin/env", "DESTDIR=" + dest.path(), "cmake", "--install", kBuild, "--prefix", prefix});
  INFO(r.out << r.err);
  REQUIRE(r.exitCode == 0);
  return r;
}

mtm::test::RunResult shell(const std::string& script) { return run({"/bin/bash", "-c", script}); }

}  // namespace

TEST_CASE("cmake --install puts mtmd, mtmctl, the unit and the config in place and keeps an edited config", "[install][host]") {
  TempDir dest;
  install(dest, "/usr/local");
  const std::string root = dest.path();
  CHECK(std::filesystem::exists(root + "/usr/local/sbin/mtmd"));
  CHECK(std::filesystem::exists(root + "/usr/local/bin/mtmctl"));
  CHECK(std::filesystem::exists(root + "/usr/local/include/cxlccl.h"));
  CHECK(std::filesystem::exists(root + "/usr/local/include/mtm/hint.h"));
  CHECK(std::filesystem::exists(root + "/usr/local/bin/cxlccl-pool"));
  // GNUInstallDirs: /usr/local's config is in /usr/local/etc; systemd reads /usr/local/lib/systemd/system.
  const std::string config = "/usr/local/etc/mtm/mtm.yaml";
  CHECK(readFile(root + config) == readFile(mtm::test::sourceDir() + "/config/mtm.yaml"));
  const auto unit = readFile(root + "/usr/local/lib/systemd/system/mtmd.service");
  CHECK(unit.find("ExecStart=/usr/local/sbin/mtmd --config " + config + "\n") != std::string::npos);
  CHECK(unit.find("Documentation=file:///usr/local/share/doc/mtm/README.md\n") != std::string::npos);
  CHECK(unit.find("Type=notify\n") != std::string::npos);
  CHECK(unit.find("CapabilityBoundingSet=CAP_SYS_PTRACE CAP_SYS_NICE CAP_BPF CAP_PERFMON\n") != std::string::npos);

  dest.write(config.substr(1), "policy:\n  name: none\n");
  auto again = install(dest, "/usr/local");
  CHECK(again.out.find("Keeping: " + root + config) != std::string::npos);
  CHECK(readFile(root + config) == "policy:\n  name: none\n");

  if (!std::filesystem::exists("/usr/bin/systemd-analyze")) {
    WARN("systemd-analyze missing: the unit's syntax is not verified");
    return;
  }
  // Verify the unit as installed, pointed at this build's binary and the default config.
  std::string local = unit;
  local.replace(local.find("/usr/local/sbin/mtmd"), 20, MTM_BIN_DIR "/mtmd");
  local.replace(local.find(config), config.size(), mtm::test::sourceDir() + "/config/mtm.yaml");
  auto path = dest.write("mtmd.service", local);
  auto verify = run({"/usr/bin/systemd-analyze", "verify", path});
  INFO(verify.out << verify.err);
  CHECK(verify.exitCode == 0);
}

TEST_CASE("cmake --install places the config and the unit from the prefix given at install time", "[install][host]") {
  struct Case {
    std::string prefix, config, unitDir, sbin;
  };
  const std::vector<Case> cases = {
      {"/usr", "/etc/mtm/mtm.yaml", "/lib/systemd/system", "/usr/sbin"},
      {"/opt/mtm", "/etc/opt/mtm/mtm/mtm.yaml", "/opt/mtm/lib/systemd/system", "/opt/mtm/sbin"},
      {"/srv/tiering/", "/srv/tiering/etc/mtm/mtm.yaml", "/srv/tiering/lib/systemd/system", "/srv/tiering/sbin"},
  };
  for (const auto& c : cases) {
    INFO("--prefix " << c.prefix);
    TempDir dest;
    install(dest, c.prefix);
    CHECK(std::filesystem::exists(dest.path() + c.config));
    CHECK(std::filesystem::exists(dest.path() + c.sbin + "/mtmd"));
    const auto unit = readFile(dest.path() + c.unitDir + "/mtmd.service");
    CHECK(unit.find("ExecStart=" + c.sbin + "/mtmd --config " + c.config + "\n") != std::string::npos);
  }
}

TEST_CASE("installed tools find libcxlccl, and the man pages and mtmctl's completion are installed", "[install][host]") {
  TempDir dest;
  install(dest, "/usr/local");
  const std::string prefix = dest.path() + "/usr/local";
  // Nothing tells the loader about PREFIX/lib: the programs' RUNPATH does.
  for (const std::string tool : {"cxlccl-perf", "cxlccl-delta-perf", "cxlccl-pool"}) {
    auto r = run({"/usr/bin/env", "-u", "LD_LIBRARY_PATH", prefix + "/bin/" + tool, "--version"});
    INFO(tool << ": " << r.err);
    CHECK(r.exitCode == 0);
    CHECK(r.out == tool + " " MTM_VERSION "\n");
    auto bad = run({prefix + "/bin/" + tool, "--no-such-option"});
    CHECK(bad.exitCode != 0);
    CHECK(!bad.err.empty());
  }

  // Each page renders without a warning and has the NAME line whatis needs (lexgrog parses it).
  for (const std::string page :
       {"man8/mtmd.8", "man1/mtmctl.1", "man5/mtm.yaml.5", "man1/cxlccl-pool.1", "man1/cxlccl-perf.1", "man1/cxlccl-delta-perf.1"}) {
    const std::string file = prefix + "/share/man/" + page + ".gz";
    INFO(file);
    REQUIRE(std::filesystem::exists(file));
    auto render = shell("zcat " + file + " | groff -man -Tutf8 -ww 2>&1 >/dev/null");
    CHECK(render.out.empty());
    CHECK(run({"/usr/bin/lexgrog", file}).exitCode == 0);
  }
  // mtmctl(1) documents every subcommand with its options.
  const auto mtmctl = shell("zcat " + prefix + "/share/man/man1/mtmctl.1.gz").out;
  for (const std::string sub : {"tiers", "config check", "migrate", "run", "attach", "status", "top"})
    CHECK(mtmctl.find(".SS \"mtmctl " + sub + "\"") != std::string::npos);
  CHECK(mtmctl.find("--dry-run") != std::string::npos);

  // The completion reads the installed mtmctl's help: subcommands, options, choices, pids.
  const std::string complete =
      "source " + prefix + "/share/bash-completion/completions/mtmctl; PATH=" + prefix +
      "/bin:$PATH; "
      "c() { COMP_WORDS=(\"$@\"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMPREPLY=(); _mtmctl; echo \"${COMPREPLY[*]}\"; }; ";
  CHECK(shell(complete + "c mtmctl at").out == "attach\n");
  CHECK(shell(complete + "c mtmctl config ''").out == "check show\n");
  CHECK(shell(complete + "c mtmctl migrate --f").out == "--fallback --format\n");
  CHECK(shell(complete + "c mtmctl tiers --format ''").out == "text json csv\n");
  CHECK(shell(complete + "c mtmctl attach $$ | tr ' ' '\\n' | grep -qx $$").exitCode == 0);
  CHECK(shell(complete + "c mtmctl run -- bas | tr ' ' '\\n' | grep -qx bash").exitCode == 0);
  CHECK(shell(complete + "c mtmctl config check " + prefix + "/etc/mtm/mtm.y").out == prefix + "/etc/mtm/mtm.yaml\n");
}

TEST_CASE("a project builds against the installed libcxlccl by find_package(cxlccl) and by pkg-config", "[install][host]") {
  TempDir dest, work;
  install(dest, "/usr/local");
  const std::string prefix = dest.path() + "/usr/local";
  const std::string consumer = mtm::test::sourceDir() + "/tests/install";

  auto configure = run({"/usr/bin/cmake", "-S", consumer, "-B", work.path() + "/cmake", "-DCMAKE_PREFIX_PATH=" + prefix});
  INFO(configure.out << configure.err);
  REQUIRE(configure.exitCode == 0);
  auto build = run({"/usr/bin/cmake", "--build", work.path() + "/cmake"});
  INFO(build.out << build.err);
  REQUIRE(build.exitCode == 0);

  auto flags = run({"/usr/bin/env", "PKG_CONFIG_PATH=" + prefix + "/lib/pkgconfig", "pkg-config", "--cflags", "--libs", "cxlccl"});
  INFO(flags.err);
  REQUIRE(flags.exitCode == 0);
  auto cc = shell("cc " + consumer + "/consumer.c " + flags.out.substr(0, flags.out.size() - 1) + " -Wl,-rpath," + prefix + "/lib -o " +
                  work.path() + "/pkg-config-consumer");
  INFO(cc.err);
  REQUIRE(cc.exitCode == 0);

  if (mtm::test::kAddressSanitizer) {
    WARN("built, not run: this build's libcxlccl needs ASan's runtime loaded first");
    return;
  }
  for (const std::string& program : {work.path() + "/cmake/consumer", work.path() + "/pkg-config-consumer"}) {
    auto r = run({program});
    INFO(program << ": " << r.err);
    CHECK(r.exitCode == 0);
    CHECK(r.out.find("libcxlccl 100 (built for 100): ") == 0);
  }
}
