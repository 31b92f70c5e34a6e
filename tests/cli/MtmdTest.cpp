// mtmd as systemd runs it: a real process, real signals.
#include <catch2/catch.hpp>

#include <csignal>

#include "ChildProcess.h"
#include "Run.h"

using mtm::test::bin;
using mtm::test::run;

namespace {

// mtmd in the foreground on a config file of its own (socket and lock in a temporary directory);
// `paths` is the config's daemon section, for rewrites before a SIGHUP.
struct Daemon {
  mtm::test::TempDir dir;
  std::string paths = "daemon:\n  socket: " + dir.path() + "/s\n  lock_file: " + dir.path() + "/l\n  metrics: 127.0.0.1:0\n";
  std::string cfg = dir.write("mtm.yaml", paths + "  log_level: info\n");
  mtm::test::ChildProcess d{{bin("mtmd"), "--config", cfg}, dir.path() + "/log"};
};

}  // namespace

TEST_CASE("mtmd logs the tiers, reloads on SIGHUP, keeps its config when the new one is broken, stops on SIGTERM", "[mtmd]") {
  Daemon daemon;
  auto& [dir, paths, cfg, d] = daemon;
  REQUIRE(d.waitForLog("ready"));
  CHECK(d.log().find("tier index=0 name=tier0") != std::string::npos);

  dir.write("mtm.yaml", paths + "policy:\n  name: bogus\n");
  d.signal(SIGHUP);
  REQUIRE(d.waitForLog("reload failed: keeping the previous config"));
  CHECK(d.log().find(cfg + ":6: policy.name: expected one of mtm, two_tier, none, got \"bogus\"") != std::string::npos);

  dir.write("mtm.yaml", paths + "tiers:\n  list:\n    - {name: everything, nodes: 0}\n");
  d.signal(SIGHUP);
  REQUIRE(d.waitForLog("reloaded config=" + cfg));
  CHECK(d.log().find("tier index=0 name=everything") != std::string::npos);

  d.signal(SIGTERM);
  CHECK(d.wait() == 0);
  CHECK(d.log().find("stop signal=SIGTERM") != std::string::npos);
}

TEST_CASE("a reload keeps the profiler's regions and the policy's memory when their sections are unchanged", "[mtmd]") {
  Daemon daemon;
  auto& [dir, paths, cfg, d] = daemon;
  REQUIRE(d.waitForLog("ready"));
  // The daemon section changed (its log level), nothing else: both kept.
  dir.write("mtm.yaml", paths + "  log_level: debug\n");
  d.signal(SIGHUP);
  REQUIRE(d.waitForLog("reloaded config=" + cfg));
  CHECK(d.log().find("(profiler kept: regions and their history) (policy kept: its memory of moves)") != std::string::npos);
  // A new profiler budget: a new profiler; the policy keeps its memory.
  dir.write("mtm.yaml", paths + "profiler:\n  budget: 1%\n");
  d.signal(SIGHUP);
  REQUIRE(d.waitForLog("reloaded config=" + cfg, 2));
  CHECK(d.log().find("budget=1.00% (policy kept: its memory of moves)") != std::string::npos);
  // A new policy setting: a new policy; the profiler (budget 1% again) stays.
  dir.write("mtm.yaml", paths + "profiler:\n  budget: 1%\npolicy:\n  horizon_s: 30\n");
  d.signal(SIGHUP);
  REQUIRE(d.waitForLog("reloaded config=" + cfg, 3));
  // (The last "manager" line: debug builds append file:line to it.)
  const std::string log = d.log();
  const auto last = log.rfind("manager policy=");
  REQUIRE(last != std::string::npos);
  const std::string line = log.substr(last, log.find('\n', last) - last);
  CHECK(line.find("budget=1.00% (profiler kept: regions and their history)") != std::string::npos);
  CHECK(line.find("policy kept") == std::string::npos);
  d.signal(SIGTERM);
  CHECK(d.wait() == 0);
}

TEST_CASE("mtmd refuses a broken config at start with a non-zero exit", "[mtmd]") {
  mtm::test::TempDir dir;
  auto cfg = dir.write("mtm.yaml", "profiler:\n  budget: lots\n");
  auto r = run({bin("mtmd"), "--config", cfg});
  CHECK(r.exitCode == 1);
  CHECK(r.err.find(cfg + ":2: profiler.budget: expected a number in [0.0001, 1] or a percentage, got \"lots\"") != std::string::npos);

  auto check = run({bin("mtmd"), "--check-config", cfg});
  CHECK(check.exitCode == 1);
  auto plugins = run({bin("mtmd"), "--list-plugins"});
  CHECK(plugins.exitCode == 0);
  CHECK(plugins.out.find("policies:\n  mtm ") != std::string::npos);
  auto bad = run({bin("mtmd"), "--log-level", "loud"});
  CHECK(bad.exitCode == 2);
}

TEST_CASE("under systemd (JOURNAL_STREAM set) log lines carry syslog priorities, not timestamps", "[mtmd]") {
  mtm::test::TempDir dir;
  auto cfg = dir.write("mtm.yaml", "policy:\n  name: bogus\n");
  auto r = run({"/usr/bin/env", "JOURNAL_STREAM=8:12345", bin("mtmd"), "--config", cfg});
  CHECK(r.exitCode == 1);
  CHECK(r.err.rfind("<3>config error:", 0) == 0);
  auto tty = run({bin("mtmd"), "--config", cfg});
  CHECK(tty.err.find(" mtmd error: config error:") != std::string::npos);
}
