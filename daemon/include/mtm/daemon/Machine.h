#pragma once
// The machine as mtm sees it: the discovered topology and the tiers built from it by a config.

#include <string>

#include "mtm/KernelFs.h"
#include "mtm/Result.h"
#include "mtm/Table.h"
#include "mtm/config/Config.h"
#include "mtm/config/TierMap.h"
#include "mtm/config/Topology.h"

namespace mtm::daemon {

struct Machine {
  config::Topology topology;
  config::TierMap tiers;
};

Result<Machine> inspectMachine(const KernelFs& fs, const config::Config& config);

// `mtmctl tiers` output: tiers, nodes, THP settings and notes; CSV holds the tier table only.
std::string renderMachine(const Machine& machine, Format format);

// One log line per tier: "tier index=0 name=tier0 nodes=0 capacity=512.0MiB ...".
void logMachine(const Machine& machine);

}  // namespace mtm::daemon

namespace mtm::daemon {

// Validates a config file and that it fits the machine; the machine it would manage on success.
Result<Machine> checkConfigFile(const std::string& path, const KernelFs& fs);

// One line for a config that passed: "mtm.yaml: ok, 4 tiers: 0 > 1 > 2 > 3 (from kernel)".
std::string describeCheckedConfig(const std::string& path, const Machine& machine);

}  // namespace mtm::daemon
