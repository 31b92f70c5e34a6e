// The "ebpf_abit" source: page-table accessed bits read by one BPF program for all targets (AbitProgram), cleared
// between checks with process_madvise(MADV_COLD) (AccessedBitClear) -- one iovec per 4 KiB
// page, one whole 2 MiB iovec per THP (a range covering part of a THP would split it), neighbours
// coalesced as far as it pays here (ClearCost), pages whose bit is already clear left alone.
// Each interval reads the bits of the pages it cleared before -- profiler.abit_window_ms
// earlier when the profiler primes it, else at the end of the last interval -- and picks and
// clears the next sample, spread over regions in proportion to their variation.
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <map>
#include <random>
#include <utility>

#include "mtm/Log.h"
#include "mtm/Registry.h"
#include "mtm/profiler/AbitScanner.h"
#include "mtm/profiler/AccessedBitClear.h"
#include "mtm/profiler/CheckPick.h"
#include "mtm/profiler/ClearCost.h"
#include "mtm/profiler/Clock.h"
#include "mtm/profiler/PfnNodeMap.h"
#include "mtm/profiler/Source.h"

namespace mtm::profiler {
namespace {

class AbitSource final : public Source {
 public:
  // Loads the one program all targets share: BPF, BTF, the task iterator and rights, at once.
  Status probe() override {
    if (program_) return {};
    auto program = AbitProgram::open();
    if (!program) return std::move(program).takeError();
    program_ = std::move(*program);
    return {};
  }

  Status attach(int pid, const SharedPidfd& pidfd) override {
    if (!pidfd)
      return Error("pid " + std::to_string(pid) +
                   ": no pidfd (pidfd_open failed: a kernel before 5.3, or no descriptor left): accessed bits are cleared through one");
    if (auto st = probe(); !st.ok()) return st;
    auto scanner = program_->watch(pid);
    if (!scanner) return std::move(scanner).takeError();
    nodes_.readOnce(LivePfnNodeMap::Clock::now());
    Target t;
    t.scanner = std::move(*scanner);
    t.pidfd = pidfd;
    t.rng.seed(static_cast<uint64_t>(pid) * 0x9E3779B97F4A7C15ull);
    targets_.emplace(pid, std::move(t));
    return {};
  }

  void detach(int pid) override {
    auto it = targets_.find(pid);
    if (it == targets_.end()) return;
    targets_.erase(it);
  }

  std::optional<uint64_t> layoutGeneration(int pid) const override {
    auto it = targets_.find(pid);
    if (it == targets_.end() || !it->second.scanner->tracksLayout()) return std::nullopt;
    return it->second.scanner->layoutGeneration();
  }

  bool primes() const override { return true; }

  // Clears the bits of the next sample now: observe() reads them abit_window_ms later.
  Status prime(int pid, RegionSet& regions, Grant grant) override {
    auto it = targets_.find(pid);
    if (it == targets_.end()) return Error("pid " + std::to_string(pid) + " is not attached");
    Target& t = it->second;
    t.pending.clear();  // cleared a whole interval ago and never read: start again
    const std::vector<uint64_t> next = pickChecks(regions, grant.checks, t.rng);
    t.primedChecks = next.size();
    t.primed = true;
    return readAndClear(pid, t, regions, next, grant.cpuNs);
  }

  Result<uint64_t> observe(int pid, RegionSet& regions, Grant grant) override {
    auto it = targets_.find(pid);
    if (it == targets_.end()) return Error("pid " + std::to_string(pid) + " is not attached");
    Target& t = it->second;
    // Not primed: the next sample is cleared now, to be read a whole interval later.
    const std::vector<uint64_t> next = t.primed ? std::vector<uint64_t>{} : pickChecks(regions, grant.checks, t.rng);
    const uint64_t spent = t.primed ? t.primedChecks : next.size();
    t.primed = false;
    if (auto st = readAndClear(pid, t, regions, next, grant.cpuNs); !st.ok()) return std::move(st).takeError();
    return spent;
  }

 private:
  struct Target {
    std::unique_ptr<AbitScanner> scanner;
    SharedPidfd pidfd;              // the process's one pidfd, shared with mtmd's exit watch and mover
    std::vector<uint64_t> pending;  // cleared, not read yet
    bool primed = false;            // pending was cleared by prime(), for the next observe()
    uint64_t primedChecks = 0;
    std::mt19937_64 rng;
  };

  // One walk: the bits of the pending sample (observed), and those of `next`; then the pages of
  // `next` whose bit is set cleared (a THP as one whole 2 MiB range), and all of `next` pending
  // but those the clear did not reach within `clearCpuNs` (0: no limit) or that were refused.
  Status readAndClear(int pid, Target& t, RegionSet& regions, const std::vector<uint64_t>& next, uint64_t clearCpuNs) {
    std::vector<uint64_t> addrs = t.pending;
    addrs.insert(addrs.end(), next.begin(), next.end());
    if (addrs.empty()) return {};
    std::vector<uint8_t> flags;
    std::vector<uint64_t> pfns;
    const uint64_t t0 = threadCpuNs();
    if (auto st = t.scanner->read(addrs, flags, &pfns); !st.ok()) return st;
    const uint64_t t1 = threadCpuNs();
    const auto now = LivePfnNodeMap::Clock::now();
    for (size_t i = 0; i < t.pending.size(); ++i) {
      if (flags[i] & kAbitFault) continue;  // a racing change: no answer this time
      const bool present = flags[i] & kAbitPresent;
      const Mapping mapping = !present ? Mapping::exact : (flags[i] & kAbitHuge) ? Mapping::pmd : Mapping::pte;
      regions.observe(t.pending[i], present && (flags[i] & kAbitAccessed), present ? nodes_.nodeOf(pfns[i], now) : -1, mapping);
    }
    SampleClear sample = sampleClear(next, flags.data() + t.pending.size());
    t.pending = std::move(sample.pending);
    if (sample.ranges.empty()) return {};
    auto iov = coalesce(std::move(sample.ranges), regions);
    // From a random place on: a clear stopped at its deadline leaves out no part of the address
    // space more than another.
    std::rotate(iov.begin(), iov.begin() + long(t.rng() % iov.size()), iov.end());
    const uint64_t t2 = threadCpuNs();
    auto cleared = clearAccessedBits(t.pidfd->get(), iov, clearCpuNs, iovecsPerCall(clearCpuNs));
    if (!cleared) return std::move(cleared).takeError().context("pid " + std::to_string(pid));
    const uint64_t clearNs = threadCpuNs() - t2;
    uint64_t span = 0;
    for (const auto& v : iov) span += v.iov_len;
    for (const auto& v : cleared->notCleared) span -= v.iov_len;
    cost_.record(iov.size() - std::min(iov.size(), cleared->notCleared.size()), span, clearNs);
    const size_t unread = dropPagesIn(t.pending, std::move(cleared->notCleared));
    MTM_DEBUG("abit pid={} read={} read_us={} already_clear={} clear_iovecs={} clear_mib={:.1f} clear_us={} iovec_us={:.1f} mib_us={:.1f}",
              pid, addrs.size(), (t1 - t0) / 1000, sample.alreadyClear, iov.size(), double(span) / double(1 << 20), clearNs / 1000,
              cost_.iovecNs() / 1000, cost_.mibNs() / 1000);
    if (cleared->stoppedAtDeadline)
      MTM_DEBUG("abit pid={} clear stopped at its deadline ({} us): {} pages left unread", pid, clearCpuNs / 1000, unread);
    if (cleared->skipped > 0)
      MTM_DEBUG("abit pid={} madvise_refused={} (a hole or an unadvisable mapping: those pages left unread)", pid, cleared->skipped);
    return {};
  }

  // Calls sized to take about half the clear's allowance at the cost learned here: a clear
  // that turns slow stops within about one call past it, and each call's own cost (about 1 ms
  // under emulation, a few us on hardware) is paid once or twice an interval, not per handful.
  size_t iovecsPerCall(uint64_t clearCpuNs) const {
    if (clearCpuNs == 0 || cost_.iovecNs() <= 0) return SIZE_MAX;
    return std::max<size_t>(kMinIovecsPerCall, static_cast<size_t>(double(clearCpuNs) / 2 / cost_.iovecNs()));
  }
  static constexpr size_t kMinIovecsPerCall = 16;

  // Ranges closer than the gap that costs as much to clear as an iovec (ClearCost: measured
  // here, as the clears go) become one iovec, gaps and all, and so do ranges with only
  // THP-backed regions between them (a PMD each). Clearing a page that is not read next interval
  // does no harm: only pages cleared are read.
  std::vector<iovec> coalesce(std::vector<PageRange> ranges, RegionSet& regions) const {
    const uint64_t mergeGap = cost_.mergeGap();
    std::sort(ranges.begin(), ranges.end());
    std::vector<iovec> iov;
    PageRange cur{0, 0};
    for (const auto& r : ranges) {
      if (cur.end != 0) {
        if (r.start <= cur.end + mergeGap || onlyHugeBetween(regions, cur.end, r.start)) {
          cur.end = std::max(cur.end, r.end);
          continue;
        }
        iov.push_back({reinterpret_cast<void*>(cur.start), cur.end - cur.start});
      }
      cur = r;
    }
    if (cur.end != 0) iov.push_back({reinterpret_cast<void*>(cur.start), cur.end - cur.start});
    return iov;
  }

  // Whether [from, to) lies wholly in contiguous THP-backed regions.
  static bool onlyHugeBetween(RegionSet& regions, uint64_t from, uint64_t to) {
    for (uint64_t a = from; a < to;) {
      const Region* r = regions.find(a);
      if (!r || !r->huge) return false;
      a = r->end;
    }
    return true;
  }

  std::shared_ptr<AbitProgram> program_;
  ClearCost cost_;
  std::map<int, Target> targets_;  // destroyed before the program (their watchers hold it too)
  LivePfnNodeMap nodes_{KernelFs("/")};
};

const bool kRegistered = Registry<Source>::add("ebpf_abit", "page-table accessed bits read by a BPF program, cleared with process_madvise",
                                               [](const Source::Context&) { return std::make_unique<AbitSource>(); });

}  // namespace
}  // namespace mtm::profiler
