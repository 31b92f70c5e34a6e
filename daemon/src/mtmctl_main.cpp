// mtmctl: inspect and steer mtm.

#include "ctl/Commands.h"
#include "mtm/Log.h"
#include "mtm/daemon/Cli.h"

int main(int argc, char** argv) {
  using namespace mtm::daemon;
  CLI::App app{"mtmctl: inspect and steer mtm, the tiered-memory manager.", "mtmctl"};
  app.require_subcommand(1);
  ctl::Global global;
  app.add_option("-c,--config", global.configPath, "YAML config file (default: the embedded default)")->check(CLI::ExistingFile);
  app.add_option("--kernel-root", global.kernelRoot, "Read /sys and /proc under DIR instead of / (a captured machine)")
      ->check(CLI::ExistingDirectory);
  app.add_flag("-v,--verbose", global.verbosity,
               "Log what mtmctl does to stderr: -v info, -vv debug (an embedded manager's "
               "profiler and mover lines included)");
  app.set_version_flag("--version", "mtmctl " MTM_VERSION);

  ctl::Commands commands;
  ctl::addTiersCommand(app, global, commands);
  ctl::addConfigCommands(app, global, commands);
  ctl::addPlacementCommands(app, global, commands);
  ctl::addMigrateCommand(app, global, commands);
  ctl::addProfileCommands(app, global, commands);
  ctl::addRunCommand(app, global, commands);
  ctl::addDaemonCommands(app, global, commands);
  // Set after the subcommands, which would otherwise inherit it.
  app.footer(
      "Examples:\n"
      "  mtmctl run -- ./workload --size 8G             run a command with its memory managed\n"
      "  mtmctl status                                  what mtmd manages (mtmctl top: live)\n"
      "  mtmctl attach 1234                             ask mtmd to manage a running process\n"
      "  mtmctl tiers                                   the memory tiers, fastest first\n"
      "  mtmctl tiers --format json                     the same as JSON\n"
      "  mtmctl config check mtm.yaml                   validate a config file against this machine\n"
      "  mtmctl config show                             the effective (embedded default) config\n"
      "  mtmctl placement --pid 1234                    where a process's pages are, per node and VMA\n"
      "  mtmctl migrate --pid 1234 --all --to tier:1    move a process's pages to tier 1\n"
      "  mtmctl migrate --pid 1234 --range 0x7f00000000-0x7f10000000 --to 2 --rate 256MiB/s\n"
      "  mtmctl collapse --pid 1234 --range 0x7f00000000-0x7f10000000\n"
      "  mtmctl profile --pid 1234 --duration 30 --record p.jsonl   profile page accesses\n"
      "  mtmctl heatmap p.jsonl -o heatmap.svg            draw the recording\n"
      "  mtmctl -vv run --embedded -- ./workload          manage it here, with the debug log");

  if (int rc = parseCommandLine(app, argc, argv); rc >= 0) return rc;
  mtm::log::setup("mtmctl", global.verbosity >= 2   ? spdlog::level::debug
                            : global.verbosity == 1 ? spdlog::level::info
                                                    : spdlog::level::warn);
  for (const auto& c : commands) {
    if (!c.app->parsed()) continue;
    if (const auto* format = c.app->get_option_no_throw("--format"); format && format->count() > 0)
      ctl::setJsonErrors(format->as<std::string>() == "json");
    return c.run();
  }
  return kExitUsage;
}
