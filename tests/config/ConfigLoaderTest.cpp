#include <catch2/catch.hpp>

#include <sys/stat.h>

#include "Run.h"
#include "mtm/config/ConfigLoader.h"

using namespace mtm;
using namespace mtm::config;

namespace {

std::string errorOf(const std::string& yaml) {
  auto r = parseConfig(yaml, "mtm.yaml");
  REQUIRE_FALSE(r.ok());
  return r.error().message();
}

}  // namespace

TEST_CASE("the embedded default is config/mtm.yaml and equals the built-in defaults", "[config]") {
  CHECK(defaultConfigText() == test::readFile(test::sourceDir() + "/config/mtm.yaml"));
  Config builtIn;
  builtIn.source = "<embedded default>";
  CHECK(defaultConfig() == builtIn);
}

TEST_CASE("an empty file means all defaults", "[config]") {
  auto r = parseConfig("", "empty.yaml");
  REQUIRE(r.ok());
  Config expected;
  expected.source = "empty.yaml";
  CHECK(*r == expected);
}

TEST_CASE("values of every kind are read", "[config]") {
  auto r = parseConfig(R"(
tiers:
  discovery: hmat
  low_watermark: 1%
  high_watermark: 0.1
  list:
    - name: dram
      nodes: 0
      capacity: 1GiB
    - name: cxl
      nodes: [1, 2]
      low_watermark: 3%
profiler: {interval_ms: 200, budget: 1%, sources: [ebpf_abit], min_region: 2MiB}
policy: {name: two_tier, hot_threshold: 0.7}
migration: {max_rate: 1GiB/s, dry_run: true, threads: 4}
targets: {pids: [12, 34], cgroups: [/sys/fs/cgroup/app], commands: [redis-server]}
daemon: {log_level: debug}
)",
                       "x.yaml");
  REQUIRE(r.ok());
  CHECK(r->tiers.discovery == Discovery::Hmat);
  CHECK(r->tiers.lowWatermark == Approx(0.01));
  CHECK(r->tiers.highWatermark == Approx(0.1));
  REQUIRE(r->tiers.list.size() == 2);
  CHECK(r->tiers.list[0].nodes == std::vector<int>{0});
  CHECK(r->tiers.list[0].capacityBytes == 1ull << 30);
  CHECK(r->tiers.list[0].origin.text == "x.yaml:7");
  CHECK(r->tiers.list[1].nodes == std::vector<int>{1, 2});
  CHECK(r->tiers.list[1].lowWatermark.value() == Approx(0.03));
  CHECK_FALSE(r->tiers.list[1].highWatermark.has_value());
  CHECK(r->profiler.intervalMs == 200);
  CHECK(r->profiler.abitWindowMs == 100);  // unset: the default, at most half the interval
  CHECK(r->profiler.budget == Approx(0.01));
  CHECK(r->profiler.sources == std::vector<std::string>{"ebpf_abit"});
  CHECK(r->profiler.minRegionBytes == 2ull << 20);
  CHECK(r->policy.name == "two_tier");
  CHECK(r->migration.maxRateBytes == 1ull << 30);
  CHECK(r->migration.dryRun);
  CHECK(r->migration.threads == 4);
  CHECK(r->targets.pids == std::vector<int>{12, 34});
  CHECK(r->targets.cgroups == std::vector<std::string>{"/sys/fs/cgroup/app"});
  CHECK(r->targets.commands == std::vector<std::string>{"redis-server"});
  CHECK(r->daemon.logLevel == "debug");

  SECTION("and rendering them gives a file that reads back the same") {
    auto again = parseConfig(renderConfig(*r), "x.yaml");
    REQUIRE(again.ok());
    CHECK(*r == *again);  // origins (lines) differ, and are not part of the value
  }
}

TEST_CASE("the accessed-bit window fits the interval unless it is given", "[config]") {
  auto shortInterval = parseConfig("profiler: {interval_ms: 50}\n", "x.yaml");
  REQUIRE(shortInterval.ok());
  CHECK(shortInterval->profiler.abitWindowMs == 25);
  auto given = parseConfig("profiler: {interval_ms: 2000, abit_window_ms: 0}\n", "x.yaml");
  REQUIRE(given.ok());
  CHECK(given->profiler.abitWindowMs == 0);
  auto absent = parseConfig("policy: {name: mtm}\n", "x.yaml");
  REQUIRE(absent.ok());
  CHECK(absent->profiler.abitWindowMs == 100);
}

TEST_CASE("every config error names file:line, the key path, what was expected and what was found", "[config]") {
  CHECK(errorOf("policy:\n  hot_threshold: 9x\n") ==
        "mtm.yaml:2: policy.hot_threshold: expected a number in [0, 1] or a percentage, got \"9x\"");
  CHECK(errorOf("profiler:\n  intervl_ms: 5\n") ==
        "mtm.yaml:2: profiler.intervl_ms: unknown key, expected one of interval_ms, abit_window_ms, budget, sources, fallback_sources, "
        "hotness_decay, max_regions, min_region, split_variation, merge_difference, hw_event, hw_sample_period");
  CHECK(errorOf("bogus: 1\n") == "mtm.yaml:1: bogus: unknown key, expected one of tiers, profiler, policy, migration, targets, daemon");
  CHECK(errorOf("profiler:\n  interval_ms: 0\n") == "mtm.yaml:2: profiler.interval_ms: expected an integer in [10, 3600000], got \"0\"");
  CHECK(errorOf("profiler:\n  interval_ms: 500\n  abit_window_ms: 500\n") ==
        "mtm.yaml:3: profiler.abit_window_ms: expected less than interval_ms (500), got 500; 0 reads the bits a whole "
        "interval after clearing them");
  CHECK(errorOf("profiler:\n  interval_ms: [1]\n") == "mtm.yaml:2: profiler.interval_ms: expected an integer in [10, 3600000], got a list");
  CHECK(errorOf("migration:\n  max_rate: fast\n") == "mtm.yaml:2: migration.max_rate: expected a rate like 512MiB/s, got \"fast\"");
  CHECK(errorOf("profiler:\n  min_region: lots\n") == "mtm.yaml:2: profiler.min_region: expected a size like 512MiB or 2G, got \"lots\"");
  CHECK(errorOf("profiler:\n  min_region: 5000\n") == "mtm.yaml:2: profiler.min_region: expected a multiple of 4KiB, got 5000 bytes");
  CHECK(errorOf("migration:\n  dry_run: yes please\n") == "mtm.yaml:2: migration.dry_run: expected true or false, got \"yes please\"");
  CHECK(errorOf("policy:\n  name: smart\n") == "mtm.yaml:2: policy.name: expected one of mtm, two_tier, none, got \"smart\"");
  CHECK(errorOf("tiers:\n  discovery: guess\n") ==
        "mtm.yaml:2: tiers.discovery: expected one of auto, kernel, hmat, distance, got \"guess\"");
  CHECK(errorOf("profiler:\n  sources: [ebpf_abit, psychic]\n") ==
        "mtm.yaml:2: profiler.sources: expected one of hw_sample, ebpf_abit, page_fault, damon_vaddr, got \"psychic\"");
  CHECK(errorOf("profiler:\n  sources: [ebpf_abit, ebpf_abit]\n") == "mtm.yaml:2: profiler.sources: source \"ebpf_abit\" is listed twice");
  CHECK(errorOf("daemon:\n  socket: relative.sock\n") == "mtm.yaml:2: daemon.socket: expected an absolute path, got \"relative.sock\"");
  CHECK(errorOf("targets:\n  pids: [0]\n") == "mtm.yaml:2: targets.pids: expected an integer in [1, 4194304], got \"0\"");
  CHECK(errorOf("tiers: 5\n") ==
        "mtm.yaml:1: tiers: expected a mapping of keys (discovery, low_watermark, high_watermark, list), got \"5\"");
  CHECK(errorOf("- a\n- b\n") ==
        "mtm.yaml:1: (top level): expected a mapping of keys (tiers, profiler, policy, migration, targets, daemon), got a list");
  CHECK(errorOf("policy:\n  hot_threshold: 0.2\n  cold_threshold: 0.3\n") ==
        "mtm.yaml:2: policy.cold_threshold: expected less than hot_threshold (0.200000), got 0.300000");
  CHECK(errorOf("tiers:\n  low_watermark: 10%\n  high_watermark: 5%\n") ==
        "mtm.yaml:2: tiers.low_watermark: expected at most high_watermark (0.050000), got 0.100000");
}

TEST_CASE("tier list errors: overlapping nodes, missing nodes, bad node lists", "[config]") {
  CHECK(errorOf("tiers:\n  list:\n    - {name: a, nodes: 0-1}\n    - {name: b, nodes: \"1,2\"}\n") ==
        "mtm.yaml:4: tiers.list[1].nodes: node 1 is already in tiers.list[0]: a node belongs to one tier");
  CHECK(errorOf("tiers:\n  list:\n    - {name: a}\n") == "mtm.yaml:3: tiers.list[0].nodes: missing: every tier needs its nodes");
  CHECK(errorOf("tiers:\n  list:\n    - {name: a, nodes: \"0-\"}\n") ==
        "mtm.yaml:3: tiers.list[0].nodes: expected a node list like 0,2-3, got \"0-\"");
  CHECK(errorOf("tiers:\n  list:\n    - {name: a, nodes: 0}\n    - {name: a, nodes: 1}\n") ==
        "mtm.yaml:4: tiers.list[1].name: tier name \"a\" is used twice");
  CHECK(errorOf("tiers:\n  list: {name: a}\n") == "mtm.yaml:2: tiers.list: expected a list, got a mapping");
}

TEST_CASE("every error is reported, not just the first", "[config]") {
  CHECK(errorOf("profiler:\n  interval_ms: x\npolicy:\n  name: y\n") ==
        "mtm.yaml:2: profiler.interval_ms: expected an integer in [10, 3600000], got \"x\"\n"
        "mtm.yaml:4: policy.name: expected one of mtm, two_tier, none, got \"y\"");
}

TEST_CASE("syntax errors and unreadable files", "[config]") {
  CHECK(errorOf("policy:\n  name: [unclosed\n").rfind("mtm.yaml:3: syntax error: ", 0) == 0);
  auto missing = loadConfigFile("/nonexistent/mtm.yaml");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().message() == "/nonexistent/mtm.yaml: cannot read config: No such file or directory");
}

TEST_CASE("a key or section given twice, a second document, deep nesting: errors naming the lines", "[config]") {
  CHECK(errorOf("policy:\n  name: mtm\n  name: none\npolicy:\n  cooldown_s: 3\n") ==
        "mtm.yaml:3: policy.name: given twice (first at line 2): keep one\n"
        "mtm.yaml:4: policy: given twice (first at line 1): keep one");
  CHECK(errorOf("tiers:\n  list:\n    - {name: a, nodes: [0], name: b}\n") ==
        "mtm.yaml:3: tiers.list[0].name: given twice (first at line 3): keep one");
  CHECK(errorOf("policy:\n  name: mtm\n---\npolicy:\n  name: none\n") ==
        "mtm.yaml:3: a second YAML document: a config is one document (remove the \"---\" and what follows, or merge them)");
  const std::string deep = "a: " + std::string(5000, '[') + std::string(5000, ']') + "\n";
  CHECK(errorOf(deep).find("levels deep: a config is a few levels of mappings and lists") != std::string::npos);
  CHECK(errorOf("policy:\n  name: " + std::string(5000, 'y') + "\n") ==
        "mtm.yaml:2: policy.name: expected one of mtm, two_tier, none, got \"" + std::string(60, 'y') + "...\" (5000 characters)");
}

// yaml-cpp 0.7's LoadAll loops, allocating without end, on these (found by tests/fuzz/ConfigFuzz.cpp).
TEST_CASE("a token that starts no node is a syntax error, not a hang", "[config]") {
  CHECK(errorOf(",") == "mtm.yaml:1: syntax error: unexpected \",\" (it starts no key, value or list item)");
  CHECK(errorOf(", {name: all, nodes: \"0\n : /x: {}\n") ==
        "mtm.yaml:1: syntax error: unexpected \",\" (it starts no key, value or list item)");
  CHECK(errorOf("profiler:\n  budget: 1%\n,\n") == "mtm.yaml:3: syntax error: end of map not found");
}

// Found by tests/fuzz/ConfigFuzz.cpp: each loaded, and its rendering did not load again.
TEST_CASE("a list item that is nothing is an error -- a tier without a name renders without one and loads again", "[config]") {
  CHECK(errorOf("tiers:\n  list:\n    - # name: dram, nodes: 0\n") ==
        "mtm.yaml:3: tiers.list[0]: expected a mapping of keys (name, nodes, capacity, low_watermark, high_watermark), got nothing");
  auto nameless = parseConfig("tiers:\n  list:\n    - {nodes: [0]}\n", "mtm.yaml");
  REQUIRE(nameless.ok());
  const std::string shown = renderConfig(*nameless);
  CHECK(shown.find("name: \"\"") == std::string::npos);
  auto again = parseConfig(shown, "shown.yaml");
  REQUIRE(again.ok());
  CHECK(renderConfig(*again) == shown);
}

TEST_CASE("a config value with a control character or bytes that are not UTF-8 is refused", "[config]") {
  CHECK(errorOf("daemon:\n  socket: \"/run/mtm/m\\x04.sock\"\n") ==
        "mtm.yaml:2: daemon.socket: byte 0x04 at offset 10 is a control character or not UTF-8: a config value is printable text");
  CHECK(errorOf("targets:\n  commands: [\"redis\xfc\"]\n") ==
        "mtm.yaml:2: targets.commands: byte 0xfc at offset 5 is a control character or not UTF-8: a config value is printable text");
}

TEST_CASE("check refuses what a run would: no profiler source, a socket path too long for a Unix socket", "[config]") {
  CHECK(errorOf("profiler:\n  sources: []\n") ==
        "mtm.yaml:2: profiler.sources: expected at least one source (the default: hw_sample, ebpf_abit)");
  CHECK(errorOf("profiler:\n  sources: [ebpf_abit]\n  fallback_sources: [page_fault, ebpf_abit]\n") ==
        "mtm.yaml:3: profiler.fallback_sources: source \"ebpf_abit\" is listed twice (in sources or fallback_sources): a fallback "
        "runs only when none of sources can");
  CHECK(parseConfig("profiler:\n  fallback_sources: []\n", "mtm.yaml").ok());
  CHECK(parseConfig("daemon:\n  socket: /" + std::string(106, 's') + "\n", "mtm.yaml").ok());
  CHECK(errorOf("daemon:\n  socket: /" + std::string(107, 's') + "\n") ==
        "mtm.yaml:2: daemon.socket: expected a path of at most 107 bytes (a Unix socket's limit), got 108");
}

TEST_CASE("a config is a regular file of at most 1 MiB: directories, devices, FIFOs and huge files are refused at once", "[config]") {
  test::TempDir dir;
  auto errorOfFile = [](const std::string& path) {
    auto r = loadConfigFile(path);
    REQUIRE_FALSE(r.ok());
    return r.error().message();
  };
  CHECK(errorOfFile(dir.path()) == dir.path() + ": is a directory, not a config file");
  CHECK(errorOfFile("/dev/zero") == "/dev/zero: not a regular file (a device, FIFO or socket); a config is a YAML file");
  const std::string fifo = dir.path() + "/fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK(errorOfFile(fifo) == fifo + ": not a regular file (a device, FIFO or socket); a config is a YAML file");  // no writer: no hang
  const std::string big = dir.write("big.yaml", "# " + std::string(kMaxConfigBytes, 'x') + "\n");
  CHECK(errorOfFile(big) == big + ": larger than 1.0 MiB: not an mtm config (they are a few KiB)");
  CHECK(loadConfigFile(dir.write("ok.yaml", "policy: {name: none}\n")).ok());
}

TEST_CASE("every key is documented in docs/config.md and in config/mtm.yaml", "[config][docs]") {
  const std::string docs = test::readFile(test::sourceDir() + "/docs/config.md");
  const std::string example = test::readFile(test::sourceDir() + "/config/mtm.yaml");
  for (const auto& key : configKeys()) {
    INFO(key);
    CHECK(docs.find("`" + key + "`") != std::string::npos);
    const std::string leaf = key.substr(key.rfind('.') + 1);
    CHECK(example.find(leaf + ":") != std::string::npos);
  }
}
