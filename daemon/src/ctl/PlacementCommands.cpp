// mtmctl placement and mtmctl collapse.
#include <cstdio>

#include "ctl/Commands.h"
#include "ctl/Migration.h"
#include "mtm/Json.h"
#include "mtm/daemon/MigrationReport.h"
#include "mtm/migrate/Placement.h"

namespace mtm::daemon::ctl {

void addPlacementCommands(CLI::App& parent, const Global& global, Commands& out) {
  struct Options {
    int pid = 0;
    std::vector<std::string> ranges;
    std::string format = "text";
  };
  auto place = std::make_shared<Options>();
  auto* cmd = parent.add_subcommand("placement", "Show where a process's pages are: per node and tier, per VMA");
  cmd->add_option("-p,--pid", place->pid, "Process id")->required()->check(pidValidator());
  cmd->add_option("-r,--range", place->ranges, "Only this address range (START-END, hex); repeatable")->check(addressRangeValidator());
  cmd->add_option("-f,--format", place->format, "text|json|csv")->check(CLI::IsMember({"text", "json", "csv"}));
  out.push_back({cmd, [&global, place] {
                   config::Config cfg;
                   auto machine = effectiveMachine(global, cfg);
                   if (!machine) return fail(machine.error().message());
                   auto ranges = parseRanges(place->ranges);
                   if (!ranges) return fail(ranges.error().message());
                   LiveKernel kernel;
                   auto placement = migrate::queryPlacement(kernel.deps(), place->pid, *ranges);
                   if (!placement) return fail(placement.error().message());
                   std::fputs(renderPlacement(*placement, machine->tiers, parseFormat(place->format).value()).c_str(), stdout);
                   return 0;
                 }});

  struct CollapseOptions {
    int pid = 0;
    std::vector<std::string> ranges;
    std::string format = "text";
  };
  auto coll = std::make_shared<CollapseOptions>();
  auto* collapse = parent.add_subcommand("collapse", "Re-form THPs in address ranges (process_madvise MADV_COLLAPSE, Linux 6.1+)");
  collapse->add_option("-p,--pid", coll->pid, "Process id")->required()->check(pidValidator());
  collapse->add_option("-r,--range", coll->ranges, "Address range START-END (hex); repeatable")->required()->check(addressRangeValidator());
  collapse->add_option("-f,--format", coll->format, "text or json")->check(CLI::IsMember({"text", "json"}));
  out.push_back(
      {collapse, [coll] {
         auto ranges = parseRanges(coll->ranges);
         if (!ranges) return fail(ranges.error().message());
         LiveKernel kernel;
         auto formed = migrate::collapseThps(kernel.deps(), coll->pid, *ranges);
         if (!formed) return fail(formed.error().message());
         if (coll->format == "json")
           std::fputs(
               JsonWriter().beginObject().key("pid").value(coll->pid).key("thps_formed").value(uint64_t{*formed}).endObject().str().c_str(),
               stdout);
         else
           std::printf("collapsed pid=%d thps=%llu\n", coll->pid, static_cast<unsigned long long>(*formed));
         return 0;
       }});
}

}  // namespace mtm::daemon::ctl
