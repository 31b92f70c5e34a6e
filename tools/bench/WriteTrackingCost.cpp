// What the kernel's write tracking costs (#23, docs/benchmarks.md): a buffer registered with
// userfaultfd for asynchronous write protection (UFFD_FEATURE_WP_ASYNC, Linux 6.7) and scanned
// with PAGEMAP_SCAN tells which pages were written since the last scan without reading the
// buffer -- but every first write to a page after a scan takes a fault. Prints the scan's cost
// and a memset's with and without protection. Not part of the build:
//   g++ -O2 -std=c++20 tools/bench/WriteTrackingCost.cpp -o /tmp/write-tracking-cost && /tmp/write-tracking-cost 64
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

// Linux 6.7's uapi (Debian 12's headers predate it).
namespace {
struct PageRegion {
  std::uint64_t start, end, categories;
};
struct PmScanArg {
  std::uint64_t size, flags, start, end, walkEnd, vec, vecLen, maxPages, categoryInverted, categoryMask, categoryAnyofMask, returnMask;
};
constexpr unsigned long kPagemapScan = _IOWR('f', 16, PmScanArg);
constexpr std::uint64_t kPageIsWritten = 1 << 1, kScanWpMatching = 1 << 0, kScanCheckWpAsync = 1 << 1;
constexpr std::uint64_t kFeatureWpUnpopulated = 1 << 13, kFeatureWpAsync = 1 << 15;
constexpr int kUserModeOnly = 1;
constexpr std::size_t kPage = 4096;

double microsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
}

[[noreturn]] void fail(const char* what) {
  std::perror(what);
  std::fprintf(stderr, "write tracking needs userfaultfd with WP_ASYNC and PAGEMAP_SCAN (Linux 6.7)\n");
  std::exit(1);
}
}  // namespace

int main(int argc, char** argv) {
  const std::size_t bytes = (argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 64) << 20;
  auto* p = static_cast<char*>(std::aligned_alloc(kPage, bytes));
  std::memset(p, 1, bytes);
  const int uffd = static_cast<int>(syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | kUserModeOnly));
  if (uffd < 0) fail("userfaultfd");
  uffdio_api api{UFFD_API, kFeatureWpAsync | kFeatureWpUnpopulated, 0};
  if (ioctl(uffd, UFFDIO_API, &api) != 0) fail("UFFDIO_API");
  uffdio_register reg{{reinterpret_cast<std::uint64_t>(p), bytes}, UFFDIO_REGISTER_MODE_WP, 0};
  if (ioctl(uffd, UFFDIO_REGISTER, &reg) != 0) fail("UFFDIO_REGISTER");
  uffdio_writeprotect wp{{reinterpret_cast<std::uint64_t>(p), bytes}, UFFDIO_WRITEPROTECT_MODE_WP};
  if (ioctl(uffd, UFFDIO_WRITEPROTECT, &wp) != 0) fail("UFFDIO_WRITEPROTECT");
  const int pagemap = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  std::vector<PageRegion> vec(4096);
  // The pages written since the last scan, protected again.
  auto scan = [&] {
    std::uint64_t pages = 0;
    for (std::uint64_t at = reinterpret_cast<std::uint64_t>(p), end = at + bytes; at < end;) {
      PmScanArg a{};
      a.size = sizeof a;
      a.flags = kScanWpMatching | kScanCheckWpAsync;
      a.start = at;
      a.end = end;
      a.vec = reinterpret_cast<std::uint64_t>(vec.data());
      a.vecLen = vec.size();
      a.categoryMask = a.returnMask = kPageIsWritten;
      const long n = ioctl(pagemap, kPagemapScan, &a);
      if (n < 0) fail("PAGEMAP_SCAN");
      for (long i = 0; i < n; ++i) pages += (vec[i].end - vec[i].start) / kPage;
      at = a.walkEnd;
    }
    return pages;
  };
  auto report = [&](const char* what) {
    auto t0 = std::chrono::steady_clock::now();
    const std::uint64_t pages = scan();
    std::printf("scan after %-28s %8llu pages written, %9.1f us\n", what, static_cast<unsigned long long>(pages), microsSince(t0));
  };
  report("nothing written:");
  for (std::size_t i = 0; i < bytes; i += 100 * kPage + 64) p[i] = 2;
  report("a line every 100 pages:");
  auto t0 = std::chrono::steady_clock::now();
  std::memset(p, 3, bytes);
  std::printf("memset of %zu MiB, protected:   %9.1f us\n", bytes >> 20, microsSince(t0));
  t0 = std::chrono::steady_clock::now();
  std::memset(p, 4, bytes);
  std::printf("memset of %zu MiB, unprotected: %9.1f us\n", bytes >> 20, microsSince(t0));
  report("every page written:");
  return 0;
}
