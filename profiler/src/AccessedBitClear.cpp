#include "mtm/profiler/AccessedBitClear.h"

#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <set>
#include <string>

#include "mtm/profiler/AbitScanner.h"
#include "mtm/profiler/Clock.h"
#include "mtm/profiler/Regions.h"

namespace mtm::profiler {
namespace {

constexpr size_t kIovMax = 1024;  // UIO_MAXIOV

// The ranges cut so that none exceeds `maxBytes`; every cut on a 2 MiB boundary, so that no
// piece ends inside a THP.
std::vector<iovec> pieces(const std::vector<iovec>& ranges, uint64_t maxBytes) {
  std::vector<iovec> out;
  out.reserve(ranges.size());
  for (const auto& r : ranges) {
    uint64_t start = reinterpret_cast<uint64_t>(r.iov_base), end = start + r.iov_len;
    while (end - start > maxBytes) {
      const uint64_t cut = (start + maxBytes) & ~(kHuge - 1);
      out.push_back({reinterpret_cast<void*>(start), cut - start});
      start = cut;
    }
    if (end > start) out.push_back({reinterpret_cast<void*>(start), end - start});
  }
  return out;
}

}  // namespace

Result<ClearStats> clearAccessedBits(int pidfd, const std::vector<iovec>& ranges, uint64_t maxCpuNs, size_t iovecsPerCall) {
  const uint64_t maxBytes = maxCpuNs ? kDeadlineBytesPerCall : kMaxClearBytes;
  const std::vector<iovec> iov = pieces(ranges, maxBytes);
  ClearStats stats;
  const size_t perCall = std::clamp<size_t>(iovecsPerCall, 1, kIovMax);
  const uint64_t cpu0 = maxCpuNs ? threadCpuNs() : 0;
  for (size_t first = 0; first < iov.size();) {
    if (maxCpuNs && stats.calls > 0 && threadCpuNs() - cpu0 >= maxCpuNs) {
      stats.notCleared.insert(stats.notCleared.end(), iov.begin() + long(first), iov.end());
      stats.stoppedAtDeadline = true;
      break;
    }
    size_t n = 0;
    uint64_t bytes = 0;
    while (first + n < iov.size() && n < perCall && bytes + iov[first + n].iov_len <= maxBytes) bytes += iov[first + n++].iov_len;
    ++stats.calls;
    const long done = ::syscall(SYS_process_madvise, pidfd, iov.data() + first, n, MADV_COLD, 0);
    if (done < 0 && (errno == EPERM || errno == ESRCH || errno == EBADF)) {
      const int err = errno;
      return Error::fromErrno("process_madvise(MADV_COLD)", err)
          .context(err == EPERM ? "clearing accessed bits (needs CAP_SYS_NICE)" : "clearing accessed bits");
    }
    if (done >= 0 && static_cast<uint64_t>(done) == bytes) {
      first += n;
      continue;
    }
    // Ranges before the one that failed were advised; skip that one and go on after it.
    uint64_t advised = done > 0 ? static_cast<uint64_t>(done) : 0;
    size_t failed = first;
    while (failed < first + n - 1 && advised >= iov[failed].iov_len) advised -= iov[failed++].iov_len;
    ++stats.skipped;
    stats.notCleared.push_back(iov[failed]);
    first = failed + 1;
  }
  return stats;
}

SampleClear sampleClear(const std::vector<uint64_t>& next, const uint8_t* flags) {
  SampleClear out;
  std::set<uint64_t> heads;
  for (size_t i = 0; i < next.size(); ++i) {
    const uint8_t f = flags[i];
    const bool present = f & kAbitPresent, thp = present && (f & kAbitHuge);
    const uint64_t page = thp ? next[i] & ~(kHuge - 1) : next[i];
    if (thp && !heads.insert(page).second) continue;
    out.pending.push_back(page);  // not present: it reads as not accessed unless touched
    if (!present || !(f & kAbitAccessed)) {
      out.alreadyClear += present;
      continue;
    }
    out.ranges.push_back({page, page + (thp ? kHuge : kPage)});
  }
  return out;
}

size_t dropPagesIn(std::vector<uint64_t>& pending, std::vector<iovec> ranges) {
  if (ranges.empty()) return 0;
  std::sort(ranges.begin(), ranges.end(), [](const iovec& a, const iovec& b) { return a.iov_base < b.iov_base; });
  const size_t before = pending.size();
  std::erase_if(pending, [&](uint64_t page) {
    auto after = std::upper_bound(ranges.begin(), ranges.end(), page,
                                  [](uint64_t p, const iovec& r) { return p < reinterpret_cast<uint64_t>(r.iov_base); });
    if (after == ranges.begin()) return false;
    const iovec& r = *std::prev(after);
    return page < reinterpret_cast<uint64_t>(r.iov_base) + r.iov_len;
  });
  return before - pending.size();
}

}  // namespace mtm::profiler
