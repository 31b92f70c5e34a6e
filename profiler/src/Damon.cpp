#include "mtm/profiler/Damon.h"

#include <cerrno>

#include "mtm/Log.h"
#include "mtm/Parse.h"

namespace mtm::profiler {
namespace {

const std::string kCtx = "/kdamonds/0/contexts/0";

// DAMON's sysfs and /proc, on the live machine (what it reads and writes is its own kdamond's).
const KernelFs& live() {
  static const KernelFs fs("/");
  return fs;
}

Result<std::string> readFile(const std::string& path) {
  auto text = live().read(path);
  if (!text) return text;
  return std::string(trim(*text));
}

}  // namespace

Status DamonMonitor::available(const std::string& root) {
  auto n = readFile(root + "/kdamonds/nr_kdamonds");
  if (!n) return Error("no DAMON sysfs (" + root + "): the kernel lacks CONFIG_DAMON_SYSFS");
  if (*n != "0") return Error("DAMON is already in use here (" + *n + " kdamond(s) in " + root + "): mtm does not touch another monitor");
  return {};
}

Status DamonMonitor::write(const std::string& path, const std::string& value) const { return live().write(root_ + path, value); }

Result<std::unique_ptr<DamonMonitor>> DamonMonitor::start(int pid, const DamonAttrs& attrs, const std::string& root) {
  if (auto st = available(root); !st.ok()) return std::move(st).takeError();
  std::unique_ptr<DamonMonitor> m(new DamonMonitor(root, attrs));
  const std::string a = kCtx + "/monitoring_attrs";
  const std::pair<std::string, std::string> steps[] = {
      {"/kdamonds/nr_kdamonds", "1"},
      {"/kdamonds/0/contexts/nr_contexts", "1"},
      {kCtx + "/operations", "vaddr"},
      {a + "/intervals/sample_us", std::to_string(attrs.sampleUs)},
      {a + "/intervals/aggr_us", std::to_string(attrs.aggrUs)},
      {a + "/intervals/update_us", std::to_string(attrs.updateUs)},
      {a + "/nr_regions/min", std::to_string(attrs.minRegions)},
      {a + "/nr_regions/max", std::to_string(attrs.maxRegions)},
      {kCtx + "/targets/nr_targets", "1"},
      {kCtx + "/targets/0/pid_target", std::to_string(pid)},
      // A "stat" scheme that matches every region: its tried regions are the monitoring results.
      {kCtx + "/schemes/nr_schemes", "1"},
      {kCtx + "/schemes/0/action", "stat"},
      {kCtx + "/schemes/0/access_pattern/sz/min", "0"},
      {kCtx + "/schemes/0/access_pattern/sz/max", "18446744073709551615"},
      {kCtx + "/schemes/0/access_pattern/nr_accesses/min", "0"},
      {kCtx + "/schemes/0/access_pattern/nr_accesses/max", "4294967295"},
      {kCtx + "/schemes/0/access_pattern/age/min", "0"},
      {kCtx + "/schemes/0/access_pattern/age/max", "4294967295"},
      {"/kdamonds/0/state", "on"},
  };
  for (const auto& [path, value] : steps) {
    if (auto st = m->write(path, value); !st.ok()) {
      (void)m->write("/kdamonds/nr_kdamonds", "0");
      return std::move(st).takeError().context(value == "vaddr" ? "the kernel lacks DAMON vaddr (CONFIG_DAMON_VADDR)"
                                                                : "starting DAMON for pid " + std::to_string(pid));
    }
  }
  m->running_ = true;
  auto kpid = readFile(root + "/kdamonds/0/pid");
  if (kpid) m->kdamondPid_ = static_cast<int>(parseUnsigned(*kpid).valueOr(0));
  MTM_INFO("damon pid={} kdamond={} sample_us={} aggr_us={}", pid, m->kdamondPid_, attrs.sampleUs, attrs.aggrUs);
  return m;
}

DamonMonitor::~DamonMonitor() {
  if (running_) (void)write("/kdamonds/0/state", "off");
  (void)write("/kdamonds/nr_kdamonds", "0");
}

Result<std::vector<DamonRegion>> DamonMonitor::regions() {
  if (auto st = write("/kdamonds/0/state", "update_schemes_tried_regions"); !st.ok()) return std::move(st).takeError();
  const std::string dir = root_ + kCtx + "/schemes/0/tried_regions";
  std::vector<DamonRegion> out;
  for (int i = 0;; ++i) {
    const std::string r = dir + "/" + std::to_string(i);
    auto start = readFile(r + "/start");
    if (!start) break;
    DamonRegion d;
    d.start = parseUnsigned(*start).valueOr(0);
    d.end = parseUnsigned(readFile(r + "/end").valueOr("0")).valueOr(0);
    d.nrAccesses = static_cast<uint32_t>(parseUnsigned(readFile(r + "/nr_accesses").valueOr("0")).valueOr(0));
    d.age = static_cast<uint32_t>(parseUnsigned(readFile(r + "/age").valueOr("0")).valueOr(0));
    out.push_back(d);
  }
  return out;
}

uint64_t DamonMonitor::cpuNs() const { return kdamondPid_ > 0 ? processCpuNs(live(), kdamondPid_) : 0; }

}  // namespace mtm::profiler
