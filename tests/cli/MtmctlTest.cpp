// mtmctl as a user runs it: real binaries, real or captured kernel trees.
#include <catch2/catch.hpp>

#include <yaml-cpp/yaml.h>

#include "Run.h"
#include "Skip.h"

using mtm::test::bin;
using mtm::test::fixture;
using mtm::test::run;

namespace {
// A line count that ignores the trailing newline.
size_t lines(const std::string& s) {
  size_t n = 0;
  for (char c : s) n += c == '\n';
  return n;
}
}  // namespace

TEST_CASE("mtmctl tiers on a captured 4-node guest, as text, JSON and CSV", "[cli]") {
  auto text = run({bin("mtmctl"), "--kernel-root", fixture("vm-6.12-4node-hmat"), "tiers"});
  REQUIRE(text.exitCode == 0);
  CHECK(text.out.rfind("Tiers (fastest first, from kernel):\n", 0) == 0);
  CHECK(text.out.find("\n3     tier3  3      ") != std::string::npos);

  auto json = run({bin("mtmctl"), "--kernel-root", fixture("vm-6.12-4node-hmat"), "tiers", "--format", "json"});
  REQUIRE(json.exitCode == 0);
  YAML::Node doc = YAML::Load(json.out);  // JSON is YAML
  CHECK(doc["source"].as<std::string>() == "kernel");
  REQUIRE(doc["tiers"].size() == 4);
  CHECK(doc["tiers"][2]["nodes"][0].as<int>() == 2);
  CHECK(doc["tiers"][2]["read_latency_ns"].as<int>() == 280);
  CHECK(doc["tiers"][0]["kernel_reserve_bytes"].as<uint64_t>() == (238 + 487 + 7758) * 4096ull);  // zoneinfo
  CHECK(doc["nodes"][1]["distances"][3].as<int>() == 30);
  CHECK(doc["thp"]["enabled"].as<std::string>() == "always");

  auto csv = run({bin("mtmctl"), "--kernel-root", fixture("vm-6.12-4node-hmat"), "tiers", "-f", "csv"});
  REQUIRE(csv.exitCode == 0);
  CHECK(lines(csv.out) == 5);
  CHECK(csv.out.rfind("tier,name,nodes,capacity_bytes,", 0) == 0);
}

TEST_CASE("mtmctl tiers on this machine", "[cli]") {
  auto r = run({bin("mtmctl"), "tiers", "--format", "json"});
  REQUIRE(r.exitCode == 0);
  YAML::Node doc = YAML::Load(r.out);
  REQUIRE(doc["tiers"].size() >= 1);
  CHECK(doc["tiers"][0]["capacity_bytes"].as<uint64_t>() > 0);
}

TEST_CASE("bad arguments print one line and exit 2", "[cli]") {
  for (const auto& args : std::vector<std::vector<std::string>>{{"tiers", "--format", "yaml"},
                                                                {"tiers", "--bogus"},
                                                                {"frobnicate"},
                                                                {},
                                                                {"config"},
                                                                {"config", "check"},
                                                                {"--kernel-root", "/nonexistent", "tiers"}}) {
    std::vector<std::string> argv{bin("mtmctl")};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = run(argv);
    INFO(r.err);
    CHECK(r.exitCode == 2);
    CHECK(lines(r.err) == 1);
    CHECK(r.err.rfind("mtmctl: ", 0) == 0);
    CHECK(r.out.empty());
  }
}

TEST_CASE("a pid or count that is not one says what was expected, in a line a person can read", "[cli]") {
  const std::string pid = "expected a process id (a whole number from 1 to 4194304), got ";
  for (const auto& [args, message] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"attach", "0"}, "mtmctl: PID: " + pid + "\"0\" (see mtmctl --help)\n"},
           {{"detach", "abc"}, "mtmctl: PID: " + pid + "\"abc\" (see mtmctl --help)\n"},
           {{"attach", "99999999999"}, "mtmctl: PID: " + pid + "\"99999999999\" (see mtmctl --help)\n"},
           {{"migrate", "--pid", "-3", "--all", "--to", "0"}, "mtmctl: --pid: " + pid + "\"-3\" (see mtmctl --help)\n"},
           {{"top", "--count", "-1"},
            "mtmctl: --count: expected a count of refreshes (a whole number from 0 to 2147483647), got \"-1\" (see mtmctl --help)\n"}}) {
    std::vector<std::string> argv{bin("mtmctl")};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = run(argv);
    CHECK(r.exitCode == 2);
    CHECK(r.err == message);
  }
}

TEST_CASE("mtmctl -v and -vv log to stderr at info and debug -- -v wins over run -q", "[cli]") {
  auto quiet = run({bin("mtmctl"), "run", "--embedded", "--policy", "none", "-q", "--", "true"});
  auto info = run({bin("mtmctl"), "-v", "run", "--embedded", "--policy", "none", "-q", "--", "true"});
  auto debug = run({bin("mtmctl"), "-vv", "run", "--embedded", "--policy", "none", "--", "sleep", "1.5"});
  if (quiet.exitCode != 0) MTM_SKIP("no embedded manager can run here: " << quiet.err);
  CHECK(quiet.err.find("manager policy=none") == std::string::npos);
  CHECK(info.exitCode == 0);
  CHECK(info.err.find("info: manager policy=none") != std::string::npos);
  CHECK(info.err.find("debug:") == std::string::npos);
  CHECK(debug.exitCode == 0);
  CHECK(debug.err.find("debug: profiler interval=") != std::string::npos);
}

TEST_CASE("--help is complete and has examples", "[cli]") {
  auto r = run({bin("mtmctl"), "--help"});
  CHECK(r.exitCode == 0);
  for (const char* word : {"tiers", "config", "--config", "--kernel-root", "Examples:"}) {
    INFO(word);
    CHECK(r.out.find(word) != std::string::npos);
  }
  auto d = run({bin("mtmd"), "--help"});
  CHECK(d.exitCode == 0);
  for (const char* word : {"--config", "--check-config", "--list-plugins", "Examples:"}) CHECK(d.out.find(word) != std::string::npos);
}

TEST_CASE("mtmctl config check names the line and key of a broken file", "[cli]") {
  mtm::test::TempDir dir;
  auto broken = dir.write("broken.yaml", "policy:\n  name: mtm\n  hot_threshold: 9x\n");
  auto r = run({bin("mtmctl"), "config", "check", broken});
  CHECK(r.exitCode == 1);
  CHECK(r.err == broken + ":3: policy.hot_threshold: expected a number in [0, 1] or a percentage, got \"9x\"\n");

  auto good = dir.write("good.yaml", "tiers:\n  list:\n    - {name: dram, nodes: 0}\n");
  auto ok = run({bin("mtmctl"), "--kernel-root", fixture("vm-6.12-4node-hmat"), "config", "check", good});
  CHECK(ok.exitCode == 0);
  CHECK(ok.out == good + ": ok, 1 tiers: 0 (from config)\n");

  auto misfit = dir.write("misfit.yaml", "tiers:\n  list:\n    - {name: far, nodes: 5}\n");
  auto m = run({bin("mtmctl"), "--kernel-root", fixture("vm-6.12-4node-hmat"), "config", "check", misfit});
  CHECK(m.exitCode == 1);
  CHECK(m.err == misfit + ": does not fit this machine: " + misfit + ":3: tiers.list: node 5 is not on this machine (memory nodes: 0-3)\n");

  auto absent = run({bin("mtmctl"), "config", "check", dir.path() + "/absent.yaml"});
  CHECK(absent.exitCode == 1);
  CHECK(absent.err == dir.path() + "/absent.yaml: cannot read config: No such file or directory\n");
}

TEST_CASE("mtmctl config show prints the effective config, which reads back", "[cli]") {
  auto r = run({bin("mtmctl"), "config", "show"});
  REQUIRE(r.exitCode == 0);
  CHECK(r.out.rfind("# effective mtm configuration (from <embedded default>)\n", 0) == 0);
  mtm::test::TempDir dir;
  auto shown = dir.write("shown.yaml", r.out);
  auto again = run({bin("mtmctl"), "--config", shown, "config", "show"});
  REQUIRE(again.exitCode == 0);
  CHECK(again.out.substr(again.out.find('\n')) == r.out.substr(r.out.find('\n')));
}

TEST_CASE("mtmctl config show and check speak JSON when asked -- errors as objects", "[cli]") {
  auto show = run({bin("mtmctl"), "config", "show", "--format", "json"});
  REQUIRE(show.exitCode == 0);
  const YAML::Node shown = YAML::Load(show.out);
  CHECK(shown["source"].as<std::string>() == "<embedded default>");
  CHECK(shown["config"]["profiler"]["interval_ms"].as<int>() == 1000);
  CHECK(shown["config"]["daemon"]["metrics"].as<std::string>() == "127.0.0.1:9477");
  CHECK(show.out.find("\"interval_ms\":1000") != std::string::npos);  // a number, not a string

  mtm::test::TempDir dir;
  auto good = run({bin("mtmctl"), "config", "check", "-f", "json", dir.write("good.yaml", "policy:\n  name: mtm\n")});
  CHECK(good.exitCode == 0);
  CHECK(YAML::Load(good.out)["ok"].as<bool>());
  const std::string badPath = dir.write("bad.yaml", "policy:\n  name: x\nprofiler:\n  budget: lots\n");
  auto bad = run({bin("mtmctl"), "config", "check", "-f", "json", badPath});
  CHECK(bad.exitCode == 1);
  const YAML::Node errors = YAML::Load(bad.out);
  CHECK_FALSE(errors["ok"].as<bool>());
  CHECK(errors["errors"].size() == 2);
  CHECK(errors["errors"][0].as<std::string>().find(badPath + ":2: policy.name:") == 0);
  CHECK(!bad.err.empty());  // and the same for people, on stderr

  // A failure of any command that was asked for JSON is an object on stdout.
  auto gone = run({bin("mtmctl"), "placement", "--pid", "4194304", "--format", "json"});
  CHECK(gone.exitCode != 0);
  CHECK(YAML::Load(gone.out)["error"].as<std::string>().find("4194304") != std::string::npos);
}
