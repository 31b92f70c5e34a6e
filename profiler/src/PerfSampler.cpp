#include "mtm/profiler/PerfSampler.h"

#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <vector>

#include "mtm/Log.h"
#include "mtm/Parse.h"

namespace mtm::profiler {

Result<std::unique_ptr<PerfEvent>> PerfEvent::open(perf_event_attr attr, int tid, unsigned ringPages) {
  attr.size = sizeof attr;
  attr.disabled = 0;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  long fd = ::syscall(SYS_perf_event_open, &attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
  if (fd < 0) return Error::fromErrno("perf_event_open tid " + std::to_string(tid), errno);
  std::unique_ptr<PerfEvent> e(new PerfEvent());
  e->fd_.reset(static_cast<int>(fd));
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  e->mapBytes_ = page * (1 + ringPages);
  e->map_ = ::mmap(nullptr, e->mapBytes_, PROT_READ | PROT_WRITE, MAP_SHARED, e->fd_.get(), 0);
  if (e->map_ == MAP_FAILED) {
    e->map_ = nullptr;
    return Error::fromErrno("mmap perf ring", errno);
  }
  e->reader_ = std::make_unique<RingReader>(static_cast<perf_event_mmap_page*>(e->map_), static_cast<uint8_t*>(e->map_) + page,
                                            page * ringPages, attr.sample_type);
  return e;
}

PerfEvent::~PerfEvent() {
  if (map_) ::munmap(map_, mapBytes_);
}

Status PerfEvent::setPeriod(uint64_t period) {
  if (::ioctl(fd_.get(), PERF_EVENT_IOC_PERIOD, &period) != 0) return Error::fromErrno("PERF_EVENT_IOC_PERIOD", errno);
  return {};
}

Status PerfSampler::openThreads(int pid, Target& t) {
  auto tids = proc_.list("/proc/" + std::to_string(pid) + "/task");
  if (!tids) return Error("pid " + std::to_string(pid) + ": " + tids.error().message(), tids.error().errnum());
  for (const auto& name : *tids) {
    auto tid = parseUnsigned(name);
    if (!tid || t.threads.count(static_cast<int>(*tid)) || t.refused.count(static_cast<int>(*tid))) continue;
    perf_event_attr attr = attr_;
    attr.sample_period = t.period;
    auto ev = PerfEvent::open(attr, static_cast<int>(*tid));
    if (!ev) {
      if (t.threads.empty() && ev.error().errnum() != ESRCH)
        return std::move(ev).takeError().context("sampling pid " + std::to_string(pid));
      t.refused.insert(static_cast<int>(*tid));
      continue;
    }
    t.threads[static_cast<int>(*tid)] = std::move(*ev);
  }
  return {};
}

Status PerfSampler::attach(int pid) {
  Target t;
  t.period = std::max<uint64_t>(attr_.sample_period, minPeriod_);
  if (auto st = openThreads(pid, t); !st.ok()) return st;
  targets_[pid] = std::move(t);
  return {};
}

void PerfSampler::detach(int pid) { targets_.erase(pid); }

Result<RingStats> PerfSampler::observe(int pid, RegionSet& regions, uint64_t wantSamples, Mapping kind) {
  auto it = targets_.find(pid);
  if (it == targets_.end()) return Error("pid " + std::to_string(pid) + " is not attached");
  Target& t = it->second;
  (void)openThreads(pid, t);  // threads born since the last interval
  RingStats total;
  // The threads' rings read from a different one each interval, so that over intervals no
  // thread's samples are the ones always dropped.
  uint64_t left = kReadFactor * wantSamples;
  std::vector<PerfEvent*> rings;
  for (auto& [tid, ev] : t.threads) rings.push_back(ev.get());
  if (!rings.empty()) std::rotate(rings.begin(), rings.begin() + long(t.firstRing++ % rings.size()), rings.end());
  for (PerfEvent* ev : rings) {
    RingStats s = ev->drain(
        [&](const Sample& sample) {
          if (sample.addr) regions.observe(sample.addr & ~(kPage - 1), true, -1, kind);
        },
        left);
    left -= std::min(left, s.samples);
    total.samples += s.samples;
    total.lost += s.lost;
    total.truncated += s.truncated;
    total.other += s.other;
    total.skippedBytes += s.skippedBytes;
  }
  if (total.lost > 0 || total.skippedBytes > 0)
    MTM_DEBUG("perf pid={} lost={} dropped_kib={} period={}", pid, total.lost, total.skippedBytes / 1024, t.period);
  // Steer the period: more samples than wanted (or lost or dropped ones) -> longer period, and back.
  uint64_t next = t.period;
  if (total.lost > 0 || total.skippedBytes > 0 || total.samples > 2 * wantSamples)
    next = t.period * 2;
  else if (total.samples < wantSamples / 2 && t.period > minPeriod_)
    next = std::max(minPeriod_, t.period / 2);
  if (next != t.period) {
    t.period = next;
    for (auto& [tid, ev] : t.threads) (void)ev->setPeriod(next);
  }
  return total;
}

}  // namespace mtm::profiler
