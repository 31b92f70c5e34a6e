#pragma once
// Clears the page-table accessed bits of ranges of another process's memory with
// process_madvise(MADV_COLD), around two kernel quirks:
// - one call advises at most MAX_RW_COUNT bytes (INT_MAX rounded down to a page: 2 GiB - 4 KiB)
//   and silently stops there: the rest is not cleared, and the cut falls inside a THP, which
//   MADV_COLD then splits. Calls here stay under 1 GiB and cut long ranges on 2 MiB boundaries.
// - a call stops at the first range that fails (a hole: ENOMEM; a locked or PFN mapping:
//   EINVAL) and returns the bytes of the ranges before it. That range is skipped and the rest
//   cleared.

#include <sys/uio.h>

#include <cstdint>
#include <vector>

#include "mtm/Result.h"

namespace mtm::profiler {

struct ClearStats {
  uint64_t calls = 0;    // process_madvise calls made
  uint64_t skipped = 0;  // ranges the kernel refused (cleared where they were mapped, or not at all)
  // Ranges whose bits may still be set: those refused, and those not reached before the
  // deadline. Their pages must not be read as accessed.
  std::vector<iovec> notCleared;
  bool stoppedAtDeadline = false;
};

struct PageRange {
  uint64_t start, end;
  bool operator<(const PageRange& o) const { return start < o.start; }
};

// Of a sample just read (`flags` from AbitScanner, one per address of `next`): what to read a
// window later -- every address, a THP's once, by its head (its bit is the PMD's) -- and what to
// clear now: only present pages whose bit is set (a THP whole). A clear bit needs no clearing:
// the walk has just read it, and an access from now on sets it.
struct SampleClear {
  std::vector<uint64_t> pending;
  std::vector<PageRange> ranges;
  uint64_t alreadyClear = 0;  // present pages, or THPs, whose bit was clear
};
SampleClear sampleClear(const std::vector<uint64_t>& next, const uint8_t* flags);

// Takes out of `pending` the pages that lie in `ranges` (ClearStats::notCleared: their bits may
// still be set); returns how many it took.
size_t dropPagesIn(std::vector<uint64_t>& pending, std::vector<iovec> ranges);

// Fails only when the process cannot be advised at all (gone, or no right: EPERM/ESRCH).
// With `maxCpuNs` (0: none), no call is started once the calling thread has spent that much CPU
// time here, and a call advises at most kDeadlineBytesPerCall, so that a clear the machine makes
// slow -- young pages across a bridged heap, a migration contending for the same pages -- stops
// about one call past its allowance. Each call advises at most `iovecsPerCall` ranges (and at
// most UIO_MAXIOV).
Result<ClearStats> clearAccessedBits(int pidfd, const std::vector<iovec>& ranges, uint64_t maxCpuNs = 0, size_t iovecsPerCall = 1024);
// MADV_COLD on young 4 KiB pages costs ~0.3 us a page on the development host (508 MiB bridged
// into 5 iovecs: 41 ms): 32 MiB is ~2.5 ms there.
inline constexpr uint64_t kDeadlineBytesPerCall = 32ull << 20;

// Bytes one call advises at most here: under MAX_RW_COUNT, a multiple of 2 MiB.
inline constexpr uint64_t kMaxClearBytes = 1ull << 30;

}  // namespace mtm::profiler
