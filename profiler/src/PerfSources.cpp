// The perf-based sources: "page_fault" (software page-fault samples, every kernel has them) and
// "hw_sample" (PEBS load-latency / IBS op samples with data addresses, events from libpfm4).
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "PfmEvent.h"
#include "mtm/Log.h"
#include "mtm/Parse.h"
#include "mtm/Registry.h"
#include "mtm/UniqueFd.h"
#include "mtm/profiler/PerfSampler.h"
#include "mtm/profiler/Source.h"

namespace mtm::profiler {
namespace {

// Samples wanted per interval: a quarter of what the budget would give accessed-bit checks.
uint64_t wantedSamples(uint64_t checks) { return std::max<uint64_t>(64, checks / 4); }

class PageFaultSource final : public Source {
 public:
  PageFaultSource() : sampler_(attr(), 1) {}
  Status probe() override {
    // Open on ourselves: it works wherever perf_event_open is allowed.
    auto ev = PerfEvent::open(attr(), 0, 1);
    if (!ev) return std::move(ev).takeError().context("probing software page-fault sampling (kernel.perf_event_paranoid?)");
    return {};
  }
  Status attach(int pid, const SharedPidfd&) override { return sampler_.attach(pid); }
  void detach(int pid) override { sampler_.detach(pid); }
  Result<uint64_t> observe(int pid, RegionSet& regions, Grant grant) override {
    auto stats = sampler_.observe(pid, regions, wantedSamples(grant.checks), Mapping::fault);
    if (!stats) return std::move(stats).takeError();
    return uint64_t{0};
  }

 private:
  static perf_event_attr attr() {
    perf_event_attr a{};
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_PAGE_FAULTS;
    a.sample_period = 1;
    a.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_ADDR;
    a.wakeup_events = 0;
    return a;
  }
  PerfSampler sampler_;
};

// The hardware event as perf wants it: libpfm4's encoding, precise, with data addresses.
Result<perf_event_attr> hardwareEvent(const std::string& configured) {
  auto enc = encodeLoadSamplingEvent(configured);
  if (!enc) return std::move(enc).takeError();
  perf_event_attr attr{};
  attr.type = enc->type;
  attr.config = enc->config;
  attr.config1 = enc->config1;
  attr.config2 = enc->config2;
  attr.precise_ip = 2;
  attr.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_ADDR | PERF_SAMPLE_DATA_SRC | PERF_SAMPLE_WEIGHT;
  MTM_INFO("hw_sample event={}", enc->name);
  return attr;
}

class HwSampleSource final : public Source {
 public:
  explicit HwSampleSource(const config::ProfilerConfig& c) : config_(c) {}
  Status probe() override {
    // Is there a hardware PMU at all? Cycles fail with ENOENT where there is none (VMs).
    perf_event_attr cycles{};
    cycles.type = PERF_TYPE_HARDWARE;
    cycles.config = PERF_COUNT_HW_CPU_CYCLES;
    cycles.size = sizeof cycles;
    cycles.exclude_kernel = 1;
    const UniqueFd fd(static_cast<int>(::syscall(SYS_perf_event_open, &cycles, 0, -1, -1, PERF_FLAG_FD_CLOEXEC)));
    if (!fd)
      return Error(std::string("no hardware PMU (perf_event_open cycles: ") + strerrorname_np(errno) +
                       "): hardware sampling off, accessed-bit scanning only",
                   errno);
    auto attr = hardwareEvent(config_.hwEvent);
    if (!attr) return std::move(attr).takeError();
    attr->sample_period = config_.hwSamplePeriod;
    auto ev = PerfEvent::open(*attr, 0, 1);
    if (!ev) return std::move(ev).takeError().context("opening the load-sampling event");
    sampler_ = std::make_unique<PerfSampler>(*attr, 1000);
    return {};
  }
  Status attach(int pid, const SharedPidfd&) override {
    if (!sampler_) return Error("hardware sampling is not available (probe failed)");
    return sampler_->attach(pid);
  }
  void detach(int pid) override {
    if (sampler_) sampler_->detach(pid);
  }
  Result<uint64_t> observe(int pid, RegionSet& regions, Grant grant) override {
    if (!sampler_) return uint64_t{0};
    auto stats = sampler_->observe(pid, regions, wantedSamples(grant.checks), Mapping::exact);
    if (!stats) return std::move(stats).takeError();
    return uint64_t{0};
  }

 private:
  const config::ProfilerConfig& config_;
  std::unique_ptr<PerfSampler> sampler_;
};

const bool kPageFault = Registry<Source>::add("page_fault", "software page-fault samples with addresses (perf, every kernel)",
                                              [](const Source::Context&) { return std::make_unique<PageFaultSource>(); });
const bool kHw = Registry<Source>::add("hw_sample", "PEBS load-latency / IBS op samples with data addresses (perf + libpfm4)",
                                       [](const Source::Context& c) { return std::make_unique<HwSampleSource>(c.config.profiler); });

}  // namespace
}  // namespace mtm::profiler
