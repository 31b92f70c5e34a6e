#include "mtm/config/ConfigLoader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <map>
#include <set>
#include <sstream>

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>

#include "Schema.h"
#include "mtm/Json.h"
#include "mtm/Parse.h"
#include "mtm/UniqueFd.h"
#include "mtm/config/ListenAddress.h"

namespace mtm::embedded {
extern const std::string_view kDefaultConfig;
}

namespace mtm::config {
namespace {

using namespace schema;

void checkWatermarks(const YAML::Node& at, const std::string& path, double low, double high, Context& ctx) {
  if (low > high)
    ctx.fail(at, path + ".low_watermark", "expected at most high_watermark (" + std::to_string(high) + "), got " + std::to_string(low));
}

const Section<TierSpec>& tierSpecSection() {
  static const Section<TierSpec> s = [] {
    Section<TierSpec> t;
    t.field("name", &TierSpec::name, Text{})
        .field("nodes", &TierSpec::nodes, NodeList{})
        .field("capacity", &TierSpec::capacityBytes, Size{})
        .field("low_watermark", &TierSpec::lowWatermark, Optional<Fraction, double>{{}, {{}, 0, 1}})
        .field("high_watermark", &TierSpec::highWatermark, Optional<Fraction, double>{{}, {{}, 0, 1}})
        .check([](const YAML::Node& n, const std::string& path, TierSpec& spec, Context& ctx) {
          spec.origin.text = ctx.origin(n);
          if (!n["nodes"]) ctx.fail(n, path + ".nodes", "missing: every tier needs its nodes");
          if (spec.lowWatermark && spec.highWatermark) checkWatermarks(n, path, *spec.lowWatermark, *spec.highWatermark, ctx);
        });
    return t;
  }();
  return s;
}

const Section<TiersConfig>& tiersSection() {
  static const Section<TiersConfig> s = [] {
    Section<TiersConfig> t;
    t.field(
         "discovery", &TiersConfig::discovery,
         Enum<Discovery>{
             {}, {{"auto", Discovery::Auto}, {"kernel", Discovery::Kernel}, {"hmat", Discovery::Hmat}, {"distance", Discovery::Distance}}})
        .field("low_watermark", &TiersConfig::lowWatermark, Fraction{{}, 0, 1})
        .field("high_watermark", &TiersConfig::highWatermark, Fraction{{}, 0, 1})
        .field("list", &TiersConfig::list, ListOf<TierSpec>{{}, &tierSpecSection()})
        .check([](const YAML::Node& n, const std::string& path, TiersConfig& tiers, Context& ctx) {
          if (n["discovery"]) tiers.discoveryOrigin.text = ctx.origin(n["discovery"]);
          checkWatermarks(n, path, tiers.lowWatermark, tiers.highWatermark, ctx);
          std::map<int, std::string> owner;
          std::set<std::string> names;
          for (size_t i = 0; i < tiers.list.size(); ++i) {
            const auto& spec = tiers.list[i];
            const std::string item = path + ".list[" + std::to_string(i) + "]";
            const YAML::Node at = n["list"][i];
            if (!spec.name.empty() && !names.insert(spec.name).second)
              ctx.fail(at["name"], item + ".name", "tier name \"" + spec.name + "\" is used twice");
            for (int node : spec.nodes) {
              auto [it, fresh] = owner.emplace(node, item);
              if (!fresh)
                ctx.fail(at["nodes"], item + ".nodes",
                         "node " + std::to_string(node) + " is already in " + it->second + ": a node belongs to one tier");
            }
          }
        });
    return t;
  }();
  return s;
}

const std::vector<std::string> kSourceNames = {"hw_sample", "ebpf_abit", "page_fault", "damon_vaddr"};

const Section<ProfilerConfig>& profilerSection() {
  static const Section<ProfilerConfig> s = [] {
    Section<ProfilerConfig> p;
    p.field("interval_ms", &ProfilerConfig::intervalMs, UInt{{}, 10, 3600000})
        .field("abit_window_ms", &ProfilerConfig::abitWindowMs, UInt{{}, 0, 3600000})
        .field("budget", &ProfilerConfig::budget, Fraction{{}, 0.0001, 1})
        .field("sources", &ProfilerConfig::sources, TextList{{}, {}, kSourceNames})
        .field("fallback_sources", &ProfilerConfig::fallbackSources, TextList{{}, {}, kSourceNames})
        .field("hotness_decay", &ProfilerConfig::hotnessDecay, Fraction{{}, 0, 0.99})
        .field("max_regions", &ProfilerConfig::maxRegions, UInt{{}, 1, 1000000})
        .field("min_region", &ProfilerConfig::minRegionBytes, Size{})
        .field("split_variation", &ProfilerConfig::splitVariation, Fraction{{}, 0, 10})
        .field("merge_difference", &ProfilerConfig::mergeDifference, Fraction{{}, 0, 1})
        .field("hw_event", &ProfilerConfig::hwEvent, Text{})
        .field("hw_sample_period", &ProfilerConfig::hwSamplePeriod, UInt{{}, 1, 1ull << 32})
        .check([](const YAML::Node& n, const std::string& path, ProfilerConfig& cfg, Context& ctx) {
          if (cfg.minRegionBytes < 4096 || cfg.minRegionBytes % 4096 != 0)
            ctx.fail(n["min_region"] ? n["min_region"] : n, path + ".min_region",
                     "expected a multiple of 4KiB, got " + std::to_string(cfg.minRegionBytes) + " bytes");
          // Unset, it fits the interval: at most half of it.
          if (!n["abit_window_ms"]) cfg.abitWindowMs = std::min(cfg.abitWindowMs, cfg.intervalMs / 2);
          if (cfg.abitWindowMs >= cfg.intervalMs)
            ctx.fail(n["abit_window_ms"] ? n["abit_window_ms"] : n, path + ".abit_window_ms",
                     "expected less than interval_ms (" + std::to_string(cfg.intervalMs) + "), got " + std::to_string(cfg.abitWindowMs) +
                         "; 0 reads the bits a whole interval after clearing them");
          if (cfg.sources.empty())
            ctx.fail(n["sources"], path + ".sources", "expected at least one source (the default: hw_sample, ebpf_abit)");
          std::set<std::string> seen;
          for (const auto& src : cfg.sources)
            if (!seen.insert(src).second) ctx.fail(n["sources"], path + ".sources", "source \"" + src + "\" is listed twice");
          for (const auto& src : cfg.fallbackSources)
            if (!seen.insert(src).second)
              ctx.fail(
                  n["fallback_sources"], path + ".fallback_sources",
                  "source \"" + src + "\" is listed twice (in sources or fallback_sources): a fallback runs only when none of sources can");
        });
    return p;
  }();
  return s;
}

const Section<PredictConfig>& predictSection() {
  static const Section<PredictConfig> s = [] {
    Section<PredictConfig> p;
    p.field("mode", &PredictConfig::mode, Choice{{}, {"off", "on"}})
        .field("min_confidence", &PredictConfig::minConfidence, Fraction{{}, 0, 1})
        .field("horizon_s", &PredictConfig::horizonS, UInt{{}, 0, 3600});
    return p;
  }();
  return s;
}

const Section<PolicyConfig>& policySection() {
  static const Section<PolicyConfig> s = [] {
    Section<PolicyConfig> p;
    p.field("name", &PolicyConfig::name, Choice{{}, {"mtm", "two_tier", "none"}})
        .field("hot_threshold", &PolicyConfig::hotThreshold, Fraction{{}, 0, 1})
        .field("cold_threshold", &PolicyConfig::coldThreshold, Fraction{{}, 0, 1})
        .field("promote_margin", &PolicyConfig::promoteMargin, Fraction{{}, 0, 1})
        .field("cooldown_s", &PolicyConfig::cooldownS, UInt{{}, 0, 86400})
        .field("horizon_s", &PolicyConfig::horizonS, UInt{{}, 1, 86400})
        .field("pingpong_window_s", &PolicyConfig::pingPongWindowS, UInt{{}, 1, 86400})
        .field("thp_split_skew", &PolicyConfig::thpSplitSkew, Fraction{{}, 0, 1})
        .field("thp_collapse_skew", &PolicyConfig::thpCollapseSkew, Fraction{{}, 0, 1})
        .field("predict", &PolicyConfig::predict, Nested<PredictConfig>{{}, &predictSection()})
        .check([](const YAML::Node& n, const std::string& path, PolicyConfig& cfg, Context& ctx) {
          if (cfg.coldThreshold >= cfg.hotThreshold)
            ctx.fail(
                n, path + ".cold_threshold",
                "expected less than hot_threshold (" + std::to_string(cfg.hotThreshold) + "), got " + std::to_string(cfg.coldThreshold));
          if (cfg.thpCollapseSkew >= cfg.thpSplitSkew)
            ctx.fail(
                n, path + ".thp_collapse_skew",
                "expected less than thp_split_skew (" + std::to_string(cfg.thpSplitSkew) + "), got " + std::to_string(cfg.thpCollapseSkew));
        });
    return p;
  }();
  return s;
}

const Section<MigrationConfig>& migrationSection() {
  static const Section<MigrationConfig> s = [] {
    Section<MigrationConfig> m;
    m.field("mover", &MigrationConfig::mover, Choice{{}, {"move_pages", "none"}})
        .field("batch_pages", &MigrationConfig::batchPages, UInt{{}, 1, 1 << 20})
        .field("threads", &MigrationConfig::threads, UInt{{}, 1, 64})
        .field("max_rate", &MigrationConfig::maxRateBytes, Rate{})
        .field("max_pages_per_interval", &MigrationConfig::maxPagesPerInterval, UInt{{}, 1, 1ull << 32})
        .field("retries", &MigrationConfig::retries, UInt{{}, 0, 100})
        .field("dry_run", &MigrationConfig::dryRun, Bool{});
    return m;
  }();
  return s;
}

const Section<TargetsConfig>& targetsSection() {
  static const Section<TargetsConfig> s = [] {
    Section<TargetsConfig> t;
    t.field("pids", &TargetsConfig::pids, PidList{})
        .field("cgroups", &TargetsConfig::cgroups, TextList{{}, {{}, true}, {}})
        .field("commands", &TargetsConfig::commands, TextList{});
    return t;
  }();
  return s;
}

const Section<DaemonConfig>& daemonSection() {
  static const Section<DaemonConfig> s = [] {
    Section<DaemonConfig> d;
    d.field("socket", &DaemonConfig::socket, Text{{}, true})
        .field("lock_file", &DaemonConfig::lockFile, Text{{}, true})
        .field("log_level", &DaemonConfig::logLevel, Choice{{}, {"trace", "debug", "info", "warn", "error", "off"}})
        .field("cxl_pool", &DaemonConfig::cxlPool, Text{{}, true, true})  // paths, comma-separated
        .field("metrics", &DaemonConfig::metrics, Text{})
        .check([](const YAML::Node& n, const std::string& path, DaemonConfig& cfg, Context& ctx) {
          if (auto listen = parseListenAddress(cfg.metrics); !listen) ctx.fail(n["metrics"], path + ".metrics", listen.error().message());
          if (cfg.socket.size() > kMaxSocketPath)
            ctx.fail(n["socket"], path + ".socket",
                     "expected a path of at most " + std::to_string(kMaxSocketPath) + " bytes (a Unix socket's limit), got " +
                         std::to_string(cfg.socket.size()));
        });
    return d;
  }();
  return s;
}

const Section<Config>& rootSection() {
  static const Section<Config> s = [] {
    Section<Config> c;
    c.field("tiers", &Config::tiers, Nested<TiersConfig>{{}, &tiersSection()})
        .field("profiler", &Config::profiler, Nested<ProfilerConfig>{{}, &profilerSection()})
        .field("policy", &Config::policy, Nested<PolicyConfig>{{}, &policySection()})
        .field("migration", &Config::migration, Nested<MigrationConfig>{{}, &migrationSection()})
        .field("targets", &Config::targets, Nested<TargetsConfig>{{}, &targetsSection()})
        .field("daemon", &Config::daemon, Nested<DaemonConfig>{{}, &daemonSection()});
    return c;
  }();
  return s;
}

// Where each document of a YAML stream starts, up to two. yaml-cpp 0.7 never ends on some
// malformed input (a lone ","): its parser reports the same empty document again and again
// without consuming the token, and LoadAll collects them until memory runs out
// (jbeder/yaml-cpp#1040, fixed after 0.8 by #1319). So documents are walked here, and one that
// starts where the one before did is a token the parser cannot place.
class DocumentStarts final : public YAML::EventHandler {
 public:
  std::vector<YAML::Mark> starts;
  void OnDocumentStart(const YAML::Mark& mark) override { starts.push_back(mark); }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

// The one document of `yaml`; an error for a second one or a token that stops the parser.
Result<YAML::Node> loadOneDocument(const std::string& yaml, const std::string& sourceName) {
  std::istringstream in(yaml);
  YAML::Parser parser(in);
  DocumentStarts documents;
  while (documents.starts.size() < 2 && parser.HandleNextDocument(documents)) {
  }
  if (documents.starts.size() == 2) {
    const YAML::Mark& second = documents.starts[1];
    const std::string at = sourceName + ":" + std::to_string(second.line + 1);
    if (second.pos == documents.starts[0].pos && second.pos >= 0 && size_t(second.pos) < yaml.size())
      return Error(at + ": syntax error: unexpected " + jsonEscape(yaml.substr(size_t(second.pos), 1)) +
                   " (it starts no key, value or list item)");
    return Error(at + ": a second YAML document: a config is one document (remove the \"---\" and what follows, or merge them)");
  }
  return YAML::Load(yaml);
}

std::string joinLines(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += (out.empty() ? "" : "\n") + l;
  return out;
}

}  // namespace

Result<Config> parseConfig(std::string_view yaml, const std::string& sourceName) {
  YAML::Node root;
  try {
    auto document = loadOneDocument(std::string(yaml), sourceName);
    if (!document) return std::move(document).takeError();
    root = *document;
  } catch (const YAML::DeepRecursion& e) {
    return Error(sourceName + ":" + std::to_string(e.mark.line + 1) + ": nested " + std::to_string(e.depth()) +
                 " levels deep: a config is a few levels of mappings and lists");
  } catch (const YAML::ParserException& e) {
    return Error(sourceName + ":" + std::to_string(e.mark.line + 1) + ": syntax error: " + e.msg);
  }
  Context ctx{sourceName, {}};
  Config config;
  config.source = sourceName;
  try {
    rootSection().read(root, "", config, ctx);
  } catch (const YAML::Exception& e) {
    ctx.errors.push_back(sourceName + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
  if (!ctx.errors.empty()) return Error(joinLines(ctx.errors));
  return config;
}

Result<Config> loadConfigFile(const std::string& path) {
  // O_NONBLOCK: a FIFO opens at once (and is refused below) instead of waiting for a writer.
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
  if (!fd) return Error::fromErrno(path + ": cannot read config", errno);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return Error::fromErrno(path + ": cannot read config", errno);
  if (S_ISDIR(st.st_mode)) return Error(path + ": is a directory, not a config file");
  if (!S_ISREG(st.st_mode)) return Error(path + ": not a regular file (a device, FIFO or socket); a config is a YAML file");
  std::string text;
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Error::fromErrno(path + ": cannot read config", errno);
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
    if (text.size() > kMaxConfigBytes)
      return Error(path + ": larger than " + formatBytes(kMaxConfigBytes) + ": not an mtm config (they are a few KiB)");
  }
  return parseConfig(text, path);
}

Result<Config> loadConfigOrDefault(const std::string& path) {
  if (path.empty()) return defaultConfig();
  return loadConfigFile(path);
}

std::string_view defaultConfigText() { return embedded::kDefaultConfig; }

const Config& defaultConfig() {
  static const Config config = [] {
    auto parsed = parseConfig(defaultConfigText(), "<embedded default>");
    MTM_CHECK(parsed.ok());
    return std::move(parsed).value();
  }();
  return config;
}

std::string renderConfig(const Config& config) {
  YAML::Emitter e;
  rootSection().write(e, config);
  return std::string(e.c_str()) + "\n";
}

std::vector<std::string> configKeys() {
  std::vector<std::string> keys;
  tiersSection().keys("tiers.", keys);
  tierSpecSection().keys("tiers.list[].", keys);
  profilerSection().keys("profiler.", keys);
  policySection().keys("policy.", keys);
  predictSection().keys("policy.predict.", keys);
  migrationSection().keys("migration.", keys);
  targetsSection().keys("targets.", keys);
  daemonSection().keys("daemon.", keys);
  return keys;
}

}  // namespace mtm::config
