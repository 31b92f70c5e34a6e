#pragma once
// What the running kernel says about memory: NUMA nodes, their CPUs, sizes and distances, the
// kernel's own memory tiers, HMAT access attributes and THP settings. Every fact is read
// through KernelFs; what could not be read is noted, never guessed.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "mtm/KernelFs.h"
#include "mtm/Result.h"

namespace mtm::config {

// nodeN/access0/initiators/*: the best-performing initiator's view (ACPI HMAT, Linux 5.2+).
struct HmatAccess {
  uint64_t readLatencyNs = 0;
  uint64_t writeLatencyNs = 0;
  uint64_t readBandwidthMBps = 0;
  uint64_t writeBandwidthMBps = 0;
  bool operator==(const HmatAccess&) const = default;
};

struct NumaNode {
  int id = 0;
  std::vector<int> cpus;
  bool hasMemory = false;
  uint64_t totalBytes = 0;
  uint64_t freeBytes = 0;
  uint64_t kernelReserveBytes = 0;  // free memory the kernel keeps for itself (ZoneReserve.h)
  std::map<int, int> distance;      // to node id -> SLIT distance (10 = local)
  std::optional<HmatAccess> hmat;
  std::optional<int> kernelTier;  // id of memory_tierN holding this node
};

struct ThpSettings {
  std::string enabled;  // always | madvise | never
  std::string defrag;
  std::string shmemEnabled;
  uint64_t pmdSizeBytes = 0;
};

struct Topology {
  std::vector<NumaNode> nodes;                  // online nodes, by id
  std::map<int, std::vector<int>> kernelTiers;  // memory_tierN id -> nodes (lower id = faster)
  std::optional<ThpSettings> thp;
  std::vector<std::string> notes;  // fallbacks taken and facts that were missing

  const NumaNode* node(int id) const;
  std::vector<int> memoryNodes() const;
  std::vector<int> cpuNodes() const;
};

Result<Topology> discoverTopology(const KernelFs& fs);

// MemFree of one node, read now (the daemon refreshes free memory every interval).
Result<uint64_t> readNodeFreeBytes(const KernelFs& fs, int node);

}  // namespace mtm::config
