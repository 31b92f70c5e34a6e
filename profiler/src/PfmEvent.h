#pragma once
// libpfm4's event encoding, kept apart: its <perfmon/perf_event.h> clashes with
// <linux/perf_event.h>, so only plain fields cross this line.

#include <cstdint>
#include <string>

#include "mtm/Result.h"

namespace mtm::profiler {

struct PfmEncoding {
  uint32_t type = 0;
  uint64_t config = 0, config1 = 0, config2 = 0;
  std::string name;  // the event that matched
};

// A load-sampling event for this CPU: `configured` (a libpfm4 name), or with "auto" PEBS load
// latency on Intel and IBS op on AMD. The error lists what was tried and libpfm4's answers.
Result<PfmEncoding> encodeLoadSamplingEvent(const std::string& configured);

}  // namespace mtm::profiler
