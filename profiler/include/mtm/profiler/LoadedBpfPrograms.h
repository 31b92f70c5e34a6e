#pragma once
// The BPF programs loaded on this machine, every process's, as the kernel describes them (needs
// CAP_SYS_ADMIN): how tests and benchmarks find mtm's own copies and their run-time stats.

#include <cstdint>
#include <string>
#include <vector>

namespace mtm::profiler {

struct LoadedBpfProgram {
  uint32_t id = 0;
  std::string name;   // the first 15 characters, as the kernel keeps them
  uint64_t runs = 0;  // counted only while BPF run-time stats are on (bpf_enable_stats)
  uint64_t runNs = 0;
};

std::vector<LoadedBpfProgram> loadedBpfPrograms();

}  // namespace mtm::profiler
