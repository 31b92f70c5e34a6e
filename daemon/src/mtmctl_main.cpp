// mtmctl: inspect and steer mtm.

#include <cstdio>

#include "mtm/KernelFs.h"
#include "mtm/Log.h"
#include "mtm/config/ConfigLoader.h"
#include "mtm/daemon/Cli.h"
#include "mtm/daemon/Machine.h"

namespace {

using namespace mtm;

struct Options {
  std::string configPath;
  std::string kernelRoot = "/";
  std::string format = "text";
  std::string checkPath;
};

Result<config::Config> effectiveConfig(const Options& opts) {
  if (opts.configPath.empty()) return config::defaultConfig();
  return config::loadConfigFile(opts.configPath);
}

int tiers(const Options& opts) {
  auto cfg = effectiveConfig(opts);
  if (!cfg) return daemon::fail("mtmctl", cfg.error().message());
  auto machine = daemon::inspectMachine(KernelFs(opts.kernelRoot), *cfg);
  if (!machine) return daemon::fail("mtmctl", machine.error().message());
  std::fputs(daemon::renderMachine(*machine, parseFormat(opts.format).value()).c_str(), stdout);
  return 0;
}

int configCheck(const Options& opts) {
  auto machine = daemon::checkConfigFile(opts.checkPath, KernelFs(opts.kernelRoot));
  if (!machine) {
    std::fprintf(stderr, "%s\n", machine.error().message().c_str());
    return 1;
  }
  std::printf("%s\n", daemon::describeCheckedConfig(opts.checkPath, *machine).c_str());
  return 0;
}

int configShow(const Options& opts) {
  auto cfg = effectiveConfig(opts);
  if (!cfg) {
    std::fprintf(stderr, "%s\n", cfg.error().message().c_str());
    return 1;
  }
  std::printf("# effective mtm configuration (from %s)\n%s", cfg->source.c_str(),
              config::renderConfig(*cfg).c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"mtmctl: inspect and steer mtm, the tiered-memory manager.", "mtmctl"};
  app.footer(
      "Examples:\n"
      "  mtmctl tiers                       the memory tiers of this machine, fastest first\n"
      "  mtmctl tiers --format json         the same as JSON\n"
      "  mtmctl config check mtm.yaml       validate a config file against this machine\n"
      "  mtmctl config show                 the effective (embedded default) config\n"
      "  mtmctl --config my.yaml tiers      tiers as a config file would form them");
  app.require_subcommand(1);
  Options opts;
  app.add_option("-c,--config", opts.configPath, "YAML config file (default: the embedded default)")
      ->check(CLI::ExistingFile);
  app.add_option("--kernel-root", opts.kernelRoot,
                 "Read /sys and /proc under DIR instead of / (a captured machine)")
      ->check(CLI::ExistingDirectory);
  app.set_version_flag("--version", "mtmctl " MTM_VERSION);

  auto* tiersCmd = app.add_subcommand("tiers", "Show the memory tiers, their nodes and capacities");
  tiersCmd->add_option("-f,--format", opts.format, "text|json|csv")
      ->check(CLI::IsMember({"text", "json", "csv"}));

  auto* configCmd = app.add_subcommand("config", "Check or show configuration");
  configCmd->require_subcommand(1);
  auto* checkCmd = configCmd->add_subcommand("check", "Validate a config file and that it fits this machine");
  checkCmd->add_option("FILE", opts.checkPath, "Config file")->required();
  auto* showCmd = configCmd->add_subcommand("show", "Print the effective config as YAML");

  if (int rc = daemon::parseCommandLine(app, argc, argv); rc >= 0) return rc;
  log::setup("mtmctl", spdlog::level::warn);

  if (tiersCmd->parsed()) return tiers(opts);
  if (checkCmd->parsed()) return configCheck(opts);
  if (showCmd->parsed()) return configShow(opts);
  return daemon::kExitUsage;
}
