#include <cstdio>

#include "ctl/Commands.h"
#include "mtm/config/ConfigLoader.h"

namespace mtm::daemon::ctl {

void addConfigCommands(CLI::App& parent, const Global& global, Commands& out) {
  auto* config = parent.add_subcommand("config", "Check or show configuration");
  config->require_subcommand(1);

  auto path = std::make_shared<std::string>();
  auto* check = config->add_subcommand("check", "Validate a config file and that it fits this machine");
  check->add_option("FILE", *path, "Config file")->required();
  out.push_back({check, [&global, path] {
                   auto machine = checkConfigFile(*path, KernelFs(global.kernelRoot));
                   if (!machine) {
                     std::fprintf(stderr, "%s\n", machine.error().message().c_str());
                     return 1;
                   }
                   std::printf("%s\n", describeCheckedConfig(*path, *machine).c_str());
                   return 0;
                 }});

  auto* show = config->add_subcommand("show", "Print the effective config as YAML");
  out.push_back({show, [&global] {
                   auto cfg = effectiveConfig(global);
                   if (!cfg) {
                     std::fprintf(stderr, "%s\n", cfg.error().message().c_str());
                     return 1;
                   }
                   std::printf("# effective mtm configuration (from %s)\n%s", cfg->source.c_str(),
                               config::renderConfig(*cfg).c_str());
                   return 0;
                 }});
}

}  // namespace mtm::daemon::ctl
