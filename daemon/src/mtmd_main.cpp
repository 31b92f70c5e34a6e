// mtmd: the mtm daemon. For now it loads its config, discovers the memory tiers, logs them and
// waits for signals: SIGHUP reloads (keeping the old config if the new one is invalid),
// SIGTERM and SIGINT stop it.

#include <csignal>
#include <cstdio>
#include <optional>

#include "mtm/KernelFs.h"
#include "mtm/Log.h"
#include "mtm/config/ConfigLoader.h"
#include "mtm/daemon/Cli.h"
#include "mtm/daemon/Machine.h"
#include "mtm/daemon/Plugins.h"
#include "mtm/daemon/SignalFd.h"

namespace {

using namespace mtm;

struct Options {
  std::string configPath;
  std::string checkConfig;
  bool listPlugins = false;
  std::string logLevel;
  std::string kernelRoot = "/";
};

void applyLogLevel(const Options& opts, const config::Config& cfg) {
  spdlog::level::level_enum level = spdlog::level::info;
  log::parseLevel(opts.logLevel.empty() ? cfg.daemon.logLevel : opts.logLevel, level);
  log::get().set_level(level);
}

// Loads config and tiers; on failure logs why and keeps whatever the caller had.
std::optional<daemon::Machine> load(const Options& opts, const KernelFs& fs, config::Config& cfg) {
  auto loaded = config::loadConfigOrDefault(opts.configPath);
  if (!loaded) {
    MTM_ERROR("config error:\n{}", loaded.error().message());
    return std::nullopt;
  }
  auto machine = daemon::inspectMachine(fs, *loaded);
  if (!machine) {
    MTM_ERROR("config {} does not fit this machine: {}", loaded->source, machine.error().message());
    return std::nullopt;
  }
  cfg = std::move(*loaded);
  return std::move(machine).value();
}

int runDaemon(const Options& opts) {
  KernelFs fs(opts.kernelRoot);
  config::Config cfg;
  auto machine = load(opts, fs, cfg);
  if (!machine) return 1;
  applyLogLevel(opts, cfg);
  auto signals = daemon::SignalFd::open({SIGTERM, SIGINT, SIGHUP});
  if (!signals) {
    MTM_ERROR("{}", signals.error().message());
    return 1;
  }
  MTM_INFO("start config={} tiers={}", cfg.source, machine->tiers.tiers.size());
  daemon::logMachine(*machine);
  MTM_INFO("ready");
  for (;;) {
    auto sig = signals->wait(-1);
    if (!sig) {
      MTM_ERROR("{}", sig.error().message());
      return 1;
    }
    if (*sig == SIGHUP) {
      MTM_INFO("reload config={}", opts.configPath.empty() ? cfg.source : opts.configPath);
      config::Config next;
      if (auto reloaded = load(opts, fs, next)) {
        cfg = std::move(next);
        machine = std::move(reloaded);
        applyLogLevel(opts, cfg);
        daemon::logMachine(*machine);
        MTM_INFO("reloaded config={}", cfg.source);
      } else {
        MTM_WARN("reload failed: keeping the previous config ({})", cfg.source);
      }
    } else if (*sig == SIGTERM || *sig == SIGINT) {
      MTM_INFO("stop signal={}", *sig == SIGTERM ? "SIGTERM" : "SIGINT");
      return 0;
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"mtmd: the mtm tiered-memory daemon.\n"
               "Discovers the memory tiers, profiles the processes it manages and moves their\n"
               "pages between tiers. Runs in the foreground (systemd: mtmd.service).",
               "mtmd"};
  app.footer(
      "Examples:\n"
      "  mtmd                              run with the embedded default config\n"
      "  mtmd --config /etc/mtm/mtm.yaml   run with a config file (SIGHUP reloads it)\n"
      "  mtmd --check-config mtm.yaml      validate a config file and exit\n"
      "  mtmd --list-plugins               list profiler sources, policies and movers");
  Options opts;
  app.add_option("-c,--config", opts.configPath, "YAML config file (default: the embedded default)")
      ->check(CLI::ExistingFile);
  app.add_option("--check-config", opts.checkConfig, "Validate FILE, print the result and exit")
      ->type_name("FILE");
  app.add_flag("--list-plugins", opts.listPlugins, "List the registered plugins and exit");
  app.add_option("--log-level", opts.logLevel, "trace|debug|info|warn|error|off (overrides daemon.log_level)")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}));
  app.add_option("--kernel-root", opts.kernelRoot, "Read /sys and /proc under DIR (captured trees)")
      ->check(CLI::ExistingDirectory)->group("");
  app.set_version_flag("--version", "mtmd " MTM_VERSION);
  if (int rc = mtm::daemon::parseCommandLine(app, argc, argv); rc >= 0) return rc;

  mtm::log::setup("mtmd");
  if (opts.listPlugins) {
    std::fputs(mtm::daemon::listPlugins().c_str(), stdout);
    return 0;
  }
  if (!opts.checkConfig.empty()) {
    auto machine = mtm::daemon::checkConfigFile(opts.checkConfig, mtm::KernelFs(opts.kernelRoot));
    if (!machine) {
      std::fprintf(stderr, "%s\n", machine.error().message().c_str());
      return 1;
    }
    std::printf("%s\n", mtm::daemon::describeCheckedConfig(opts.checkConfig, *machine).c_str());
    return 0;
  }
  return runDaemon(opts);
}
