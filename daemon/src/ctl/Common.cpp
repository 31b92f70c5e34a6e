#include "ctl/Commands.h"

#include <cstdio>

#include "mtm/Json.h"
#include "mtm/Parse.h"
#include "mtm/config/ConfigLoader.h"
#include "mtm/daemon/Cli.h"

namespace mtm::daemon::ctl {

Result<config::Config> effectiveConfig(const Global& global) { return config::loadConfigOrDefault(global.configPath); }

Result<Machine> effectiveMachine(const Global& global, config::Config& cfg) {
  auto loaded = effectiveConfig(global);
  if (!loaded) return std::move(loaded).takeError();
  cfg = std::move(*loaded);
  return inspectMachine(KernelFs(global.kernelRoot), cfg);
}

namespace {
bool jsonErrors = false;
}  // namespace

void setJsonErrors(bool json) { jsonErrors = json; }

int fail(const std::string& message) {
  if (jsonErrors) std::fputs(JsonWriter().beginObject().key("error").value(message).endObject().str().c_str(), stdout);
  return daemon::fail("mtmctl", message);
}

CLI::Validator wholeNumberValidator(uint64_t min, uint64_t max, const std::string& what) {
  return CLI::Validator(
      [=](std::string& s) {
        auto v = parseUnsigned(s);
        if (v && *v >= min && *v <= max) return std::string();
        return "expected " + what + " (a whole number from " + std::to_string(min) + " to " + std::to_string(max) + "), got \"" +
               s.substr(0, 40) + "\"";
      },
      std::to_string(min) + "-" + std::to_string(max));
}

CLI::Validator pidValidator() { return wholeNumberValidator(1, kPidMaxLimit, "a process id"); }

}  // namespace mtm::daemon::ctl
