#include <cstdio>

#include "ctl/Commands.h"

namespace mtm::daemon::ctl {

void addTiersCommand(CLI::App& parent, const Global& global, Commands& out) {
  auto format = std::make_shared<std::string>("text");
  auto* cmd = parent.add_subcommand("tiers", "Show the memory tiers, their nodes and capacities");
  cmd->add_option("-f,--format", *format, "text|json|csv")->check(CLI::IsMember({"text", "json", "csv"}));
  out.push_back({cmd, [&global, format] {
                   config::Config cfg;
                   auto machine = effectiveMachine(global, cfg);
                   if (!machine) return fail(machine.error().message());
                   std::fputs(renderMachine(*machine, parseFormat(*format).value()).c_str(), stdout);
                   return 0;
                 }});
}

}  // namespace mtm::daemon::ctl
