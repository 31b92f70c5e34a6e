#include "PfmEvent.h"

#include <perfmon/pfmlib_perf_event.h>

#include <sstream>
#include <vector>

#include "mtm/KernelFs.h"
#include "mtm/Parse.h"

namespace mtm::profiler {
namespace {

// The CPU vendor from /proc/cpuinfo: "GenuineIntel", "AuthenticAMD", ...
std::string cpuVendor() {
  auto cpuinfo = KernelFs("/").read("/proc/cpuinfo");
  std::istringstream in(cpuinfo.valueOr(""));
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("vendor_id", 0) == 0) return std::string(trim(line.substr(line.find(':') + 1)));
  return "";
}

}  // namespace

Result<PfmEncoding> encodeLoadSamplingEvent(const std::string& configured) {
  int rc = pfm_initialize();
  if (rc != PFM_SUCCESS) return Error(std::string("libpfm4: ") + pfm_strerror(rc));
  std::vector<std::string> candidates;
  if (configured != "auto")
    candidates.push_back(configured);
  else if (cpuVendor() == "GenuineIntel")
    candidates = {"MEM_TRANS_RETIRED:LOAD_LATENCY:ldlat=3", "MEM_INST_RETIRED:ALL_LOADS", "MEM_UOPS_RETIRED:ALL_LOADS"};
  else if (cpuVendor() == "AuthenticAMD")
    candidates = {"ibs_op"};
  std::string tried;
  for (const auto& name : candidates) {
    perf_event_attr attr{};
    pfm_perf_encode_arg_t arg{};
    arg.attr = &attr;
    arg.size = sizeof arg;
    rc = pfm_get_os_event_encoding(name.c_str(), PFM_PLM3, PFM_OS_PERF_EVENT_EXT, &arg);
    if (rc == PFM_SUCCESS) return PfmEncoding{attr.type, attr.config, attr.config1, attr.config2, name};
    tried += (tried.empty() ? "" : ", ") + name + " (" + pfm_strerror(rc) + ")";
  }
  return Error("libpfm4 knows no load-sampling event for this CPU (" + cpuVendor() + ")" +
               (tried.empty() ? std::string() : ": tried " + tried));
}

}  // namespace mtm::profiler
