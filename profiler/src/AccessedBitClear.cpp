#include "mtm/profiler/AccessedBitClear.h"

#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <set>
#include <string>

#include "mtm/profiler/AbitScanner.h"
#include "mtm/profiler/Regions.h"

namespace mtm::profiler {
namespace {

constexpr size_t kIovMax = 1024;  // UIO_MAXIOV

// The ranges cut so that none exceeds kMaxClearBytes; every cut on a 2 MiB boundary, so that no
// piece ends inside a THP.
std::vector<iovec> pieces(const std::vector<iovec>& ranges) {
  std::vector<iovec> out;
  out.reserve(ranges.size());
  for (const auto& r : ranges) {
    uint64_t start = reinterpret_cast<uint64_t>(r.iov_base), end = start + r.iov_len;
    while (end - start > kMaxClearBytes) {
      const uint64_t cut = (start + kMaxClearBytes) & ~(kHuge - 1);
      out.push_back({reinterpret_cast<void*>(start), cut - start});
      start = cut;
    }
    if (end > start) out.push_back({reinterpret_cast<void*>(start), end - start});
  }
  return out;
}

}  // namespace

Result<ClearStats> clearAccessedBits(int pidfd, const std::vector<iovec>& ranges) {
  const std::vector<iovec> iov = pieces(ranges);
  ClearStats stats;
  for (size_t first = 0; first < iov.size();) {
    size_t n = 0;
    uint64_t bytes = 0;
    while (first + n < iov.size() && n < kIovMax && bytes + iov[first + n].iov_len <= kMaxClearBytes) bytes += iov[first + n++].iov_len;
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

}  // namespace mtm::profiler
