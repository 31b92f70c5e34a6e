#include "ctl/Commands.h"

#include "mtm/config/ConfigLoader.h"
#include "mtm/daemon/Cli.h"

namespace mtm::daemon::ctl {

Result<config::Config> effectiveConfig(const Global& global) {
  return config::loadConfigOrDefault(global.configPath);
}

Result<Machine> effectiveMachine(const Global& global, config::Config& cfg) {
  auto loaded = effectiveConfig(global);
  if (!loaded) return std::move(loaded).takeError();
  cfg = std::move(*loaded);
  return inspectMachine(KernelFs(global.kernelRoot), cfg);
}

int fail(const std::string& message) { return daemon::fail("mtmctl", message); }

}  // namespace mtm::daemon::ctl
