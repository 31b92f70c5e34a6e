#pragma once
// The configuration as plain structs. Member initialisers are the defaults; config/mtm.yaml
// states the same values (a test holds them equal) and docs/config.md explains each key.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mtm::config {

enum class Discovery { Auto, Kernel, Hmat, Distance };

// One explicit tier of tiers.list (fastest first).
// Where a value was written ("file:line"), for errors found after loading. Not part of the
// value: two configs that say the same are equal wherever they say it (a reload compares them).
struct Origin {
  std::string text;
  bool operator==(const Origin&) const { return true; }
};

struct TierSpec {
  std::string name;
  std::vector<int> nodes;
  uint64_t capacityBytes = 0;           // 0: all of the tier's memory
  std::optional<double> lowWatermark;   // unset: tiers.low_watermark
  std::optional<double> highWatermark;  // unset: tiers.high_watermark
  Origin origin;                        // of the entry
  bool operator==(const TierSpec&) const = default;
};

struct TiersConfig {
  Discovery discovery = Discovery::Auto;
  double lowWatermark = 0.02;   // promotion into a tier stops below this free fraction
  double highWatermark = 0.05;  // demotion makes room until this fraction is free
  std::vector<TierSpec> list;   // empty: use what discovery found
  Origin discoveryOrigin;       // of tiers.discovery (empty: not given)
  bool operator==(const TiersConfig&) const = default;
};

struct ProfilerConfig {
  uint32_t intervalMs = 1000;
  // Accessed bits are read this long after they are cleared (0: a whole interval later).
  uint32_t abitWindowMs = 100;
  double budget = 0.005;  // CPU time per second of one core
  std::vector<std::string> sources = {"hw_sample", "ebpf_abit"};
  std::vector<std::string> fallbackSources = {"page_fault"};  // when none of `sources` can run
  double hotnessDecay = 0.5;                                  // weight kept from the previous interval's hotness
  uint32_t maxRegions = 4096;
  uint64_t minRegionBytes = 64 * 1024;
  double splitVariation = 0.3;      // split a region whose samples disagree more than this
  double mergeDifference = 0.05;    // merge neighbours whose hotness differs less than this
  std::string hwEvent = "auto";     // libpfm4 event name, or auto (PEBS load latency / IBS op)
  uint64_t hwSamplePeriod = 10007;  // starting period; the budget adapts it
  bool operator==(const ProfilerConfig&) const = default;
};

// Predictive placement (PhasePredictor.h): recurring phases learned, the next one's memory
// promoted ahead of its start.
struct PredictConfig {
  std::string mode = "off";    // off | on
  double minConfidence = 0.6;  // a transition's share of the phases that followed its phase before it is acted on
  uint32_t horizonS = 2;       // how long before a phase's expected start its memory may move up
  bool operator==(const PredictConfig&) const = default;
};

struct PolicyConfig {
  std::string name = "mtm";       // mtm | two_tier | none
  double hotThreshold = 0.5;      // hotness at or above which a region is hot
  double coldThreshold = 0.1;     // hotness at or below which a region may be demoted
  double promoteMargin = 0.1;     // hysteresis: promotion needs hot_threshold + margin
  uint32_t cooldownS = 10;        // a region that moved stays put this long
  uint32_t horizonS = 600;        // a move must pay for itself within this long (MoveValue.h)
  uint32_t pingPongWindowS = 20;  // a move back within this long is ping-pong: the bar rises
  double thpSplitSkew = 0.5;      // split a THP when its subpages' hotness varies more
  double thpCollapseSkew = 0.1;   // re-collapse when it varies less than this
  PredictConfig predict;
  bool operator==(const PolicyConfig&) const = default;
};

struct MigrationConfig {
  std::string mover = "move_pages";
  uint32_t batchPages = 1024;
  uint32_t threads = 1;
  uint64_t maxRateBytes = 512ull << 20;  // per second
  uint64_t maxPagesPerInterval = 131072;
  uint32_t retries = 3;
  bool dryRun = false;
  bool operator==(const MigrationConfig&) const = default;
};

struct TargetsConfig {
  std::vector<int> pids;
  std::vector<std::string> cgroups;   // cgroup v2 paths under /sys/fs/cgroup
  std::vector<std::string> commands;  // process names (comm), exact match
  bool operator==(const TargetsConfig&) const = default;
};

// A Unix socket's path: sockaddr_un's sun_path less its terminating NUL.
inline constexpr size_t kMaxSocketPath = 107;

struct DaemonConfig {
  std::string socket = "/run/mtm/mtmd.sock";
  std::string lockFile = "/run/mtm/mtmd.lock";
  std::string logLevel = "info";
  std::string cxlPool;                     // a libcxlccl pool mtmd owns and hands out; empty: none
  std::string metrics = "127.0.0.1:9477";  // Prometheus metrics: off, a Unix socket or HOST:PORT (ListenAddress.h)
  bool operator==(const DaemonConfig&) const = default;
};

struct Config {
  TiersConfig tiers;
  ProfilerConfig profiler;
  PolicyConfig policy;
  MigrationConfig migration;
  TargetsConfig targets;
  DaemonConfig daemon;
  std::string source = "<embedded default>";  // where it was read from
  bool operator==(const Config&) const = default;
};

}  // namespace mtm::config
