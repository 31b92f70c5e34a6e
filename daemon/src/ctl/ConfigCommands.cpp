#include <cstdio>
#include <sstream>

#include "ctl/Commands.h"
#include "mtm/Json.h"
#include "mtm/config/ConfigLoader.h"

namespace mtm::daemon::ctl {

void addConfigCommands(CLI::App& parent, const Global& global, Commands& out) {
  auto* config = parent.add_subcommand("config", "Check or show configuration");
  config->require_subcommand(1);

  struct Options {
    std::string path;
    std::string format = "text";
  };
  auto o = std::make_shared<Options>();
  auto* check = config->add_subcommand("check", "Validate a config file and that it fits this machine");
  check->add_option("FILE", o->path, "Config file")->required();
  check->add_option("-f,--format", o->format, "text or json")->check(CLI::IsMember({"text", "json"}));
  out.push_back({check, [&global, o] {
                   auto machine = checkConfigFile(o->path, KernelFs(global.kernelRoot));
                   const bool json = o->format == "json";
                   if (!machine) {
                     // One problem a line, as in the text; in JSON a list of them.
                     if (json) {
                       JsonWriter w;
                       w.beginObject().key("file").value(o->path).key("ok").value(false).key("errors").beginArray();
                       std::istringstream lines(machine.error().message());
                       for (std::string line; std::getline(lines, line);) w.value(line);
                       std::fputs(w.endArray().endObject().str().c_str(), stdout);
                     }
                     std::fprintf(stderr, "%s\n", machine.error().message().c_str());
                     return 1;
                   }
                   const std::string result = describeCheckedConfig(o->path, *machine);
                   if (json) {
                     JsonWriter w;
                     w.beginObject().key("file").value(o->path).key("ok").value(true).key("tiers").value(
                         uint64_t{machine->tiers.tiers.size()});
                     std::fputs(w.key("result").value(result).endObject().str().c_str(), stdout);
                   } else {
                     std::printf("%s\n", result.c_str());
                   }
                   return 0;
                 }});

  auto* show = config->add_subcommand("show", "Print the effective config as YAML (or JSON)");
  show->add_option("-f,--format", o->format, "yaml or json (default yaml)")->check(CLI::IsMember({"yaml", "json", "text"}));
  out.push_back({show, [&global, o] {
                   auto cfg = effectiveConfig(global);
                   if (!cfg) return fail(cfg.error().message());
                   if (o->format == "json")
                     std::fputs(config::renderConfigJson(*cfg).c_str(), stdout);
                   else
                     std::printf("# effective mtm configuration (from %s)\n%s", cfg->source.c_str(), config::renderConfig(*cfg).c_str());
                   return 0;
                 }});
}

}  // namespace mtm::daemon::ctl
