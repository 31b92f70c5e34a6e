// The "damon_vaddr" source: the kernel's DAMON monitors the target's virtual addresses; each
// interval its regions' access frequency becomes observations of ours. It runs only where DAMON
// has virtual-address monitoring and no other monitor is running (never on a machine whose
// DAMON someone else uses).
#include <map>

#include "mtm/Registry.h"
#include "mtm/profiler/Damon.h"
#include "mtm/profiler/Source.h"

namespace mtm::profiler {
namespace {

class DamonSource final : public Source {
 public:
  explicit DamonSource(const config::ProfilerConfig& c) {
    attrs_.aggrUs = std::max<uint64_t>(attrs_.sampleUs * 2, uint64_t{c.intervalMs} * 1000);
    attrs_.updateUs = attrs_.aggrUs;
    attrs_.maxRegions = std::max<uint64_t>(attrs_.minRegions, c.maxRegions);
  }
  Status probe() override { return DamonMonitor::available(); }
  Status attach(int pid, const SharedPidfd&) override {
    if (!monitors_.empty()) return Error("damon_vaddr watches one process at a time (it owns the only kdamond)");
    auto m = DamonMonitor::start(pid, attrs_);
    if (!m) return std::move(m).takeError();
    monitors_[pid] = std::move(*m);
    return {};
  }
  void detach(int pid) override { monitors_.erase(pid); }
  Result<uint64_t> observe(int pid, RegionSet& regions, Grant) override {
    auto it = monitors_.find(pid);
    if (it == monitors_.end()) return Error("pid " + std::to_string(pid) + " is not attached");
    auto damon = it->second->regions();
    if (!damon) return std::move(damon).takeError();
    const double max = std::max<uint32_t>(1, it->second->maxAccesses());
    for (const auto& d : *damon) regions.observeRange(d.start, d.end, std::min(1.0, d.nrAccesses / max));
    return uint64_t{0};
  }

 private:
  DamonAttrs attrs_;
  std::map<int, std::unique_ptr<DamonMonitor>> monitors_;
};

const bool kRegistered = Registry<Source>::add("damon_vaddr", "the kernel's DAMON virtual-address monitoring (where no other monitor runs)",
                                               [](const Source::Context& c) { return std::make_unique<DamonSource>(c.config.profiler); });

}  // namespace
}  // namespace mtm::profiler
