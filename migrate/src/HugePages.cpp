#include "mtm/migrate/HugePages.h"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "mtm/Log.h"
#include "mtm/MoveRequest.h"
#include "mtm/UniqueFd.h"

namespace mtm::migrate {
namespace {

// PAGEMAP_SCAN (Linux 6.7, include/uapi/linux/fs.h); Debian 12's headers predate it.
struct PageRegion {
  uint64_t start, end, categories;
};
struct PmScanArg {
  uint64_t size, flags, start, end, walkEnd, vec, vecLen, maxPages, categoryInverted, categoryMask, categoryAnyofMask, returnMask;
};
constexpr uint64_t kPageIsHuge = 1 << 6;
constexpr unsigned long kPagemapScan = _IOWR('f', 16, PmScanArg);

// /proc/kpageflags bits (Documentation/admin-guide/mm/pagemap.rst).
constexpr uint64_t kKpfCompoundHead = 1ull << 15;
constexpr uint64_t kKpfThp = 1ull << 22;
constexpr uint64_t kPmPresent = 1ull << 63;
constexpr uint64_t kPmPfnMask = (1ull << 55) - 1;

}  // namespace

KernelHugePageFinder::KernelHugePageFinder(std::string procRoot) : procRoot_(std::move(procRoot)) {}

std::string KernelHugePageFinder::method() const {
  switch (method_) {
    case Method::PagemapScan:
      return "pagemap_scan";
    case Method::KpageFlags:
      return "kpageflags";
    case Method::None:
      return "none";
    case Method::Unknown:
      break;
  }
  return "unknown";
}

Result<std::vector<HugeExtent>> KernelHugePageFinder::find(int pid, const std::vector<Vma>& vmas, uint64_t start, uint64_t end) {
  std::vector<HugeExtent> out;
  // hugetlb mappings: every page of the VMA is a huge page of its KernelPageSize.
  std::vector<std::pair<uint64_t, uint64_t>> thpSpans;  // the rest, where THPs may be
  for (const auto& v : vmas) {
    const uint64_t s = std::max(start, v.start), e = std::min(end, v.end);
    if (s >= e) continue;
    if (v.hugetlb()) {
      for (uint64_t a = s - (s - v.start) % v.kernelPageSize; a < e; a += v.kernelPageSize) out.push_back({a, v.kernelPageSize, true});
    } else if (v.anonHugeBytes > 0 || v.path.empty() || v.path[0] == '[') {
      // Widen to whole THPs so one that straddles a bound is seen.
      thpSpans.push_back({std::max(v.start, s & ~(kThpSize - 1)), std::min(v.end, (e + kThpSize - 1) & ~(kThpSize - 1))});
    }
  }
  if (thpSpans.empty()) return out;

  const std::string path = procRoot_ + "/" + std::to_string(pid) + "/pagemap";
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return Error::fromErrno("open " + path, errno);
  for (const auto& [s, e] : thpSpans) {
    Result<std::vector<HugeExtent>> found = std::vector<HugeExtent>{};
    if (method_ == Method::Unknown || method_ == Method::PagemapScan) {
      found = scan(fd.get(), s, e);
      if (found.ok())
        method_ = Method::PagemapScan;
      else if (found.error().errnum() == ENOTTY || found.error().errnum() == EINVAL) {
        method_ = Method::KpageFlags;
        MTM_INFO("thp detection method=kpageflags reason=\"PAGEMAP_SCAN unsupported (Linux < 6.7)\"");
      } else {
        return found;
      }
    }
    if (method_ == Method::KpageFlags) {
      found = kpageflags(fd.get(), s, e);
      if (!found.ok()) {
        method_ = Method::None;
        MTM_WARN(
            "thp detection method=none reason=\"{}\": every 4 KiB address is passed; THP tail pages "
            "report EBUSY while the THP moves whole",
            found.error().message());
        found = std::vector<HugeExtent>{};
      }
    }
    if (method_ == Method::None) continue;
    out.insert(out.end(), found->begin(), found->end());
  }
  std::sort(out.begin(), out.end(), [](const HugeExtent& a, const HugeExtent& b) { return a.start < b.start; });
  return out;
}

Result<std::vector<HugeExtent>> KernelHugePageFinder::scan(int fd, uint64_t start, uint64_t end) {
  std::vector<HugeExtent> out;
  std::vector<PageRegion> regions(512);
  while (start < end) {
    PmScanArg arg{};
    arg.size = sizeof arg;
    arg.start = start;
    arg.end = end;
    arg.vec = reinterpret_cast<uint64_t>(regions.data());
    arg.vecLen = regions.size();
    arg.categoryMask = kPageIsHuge;
    arg.returnMask = kPageIsHuge;
    int n = ::ioctl(fd, kPagemapScan, &arg);
    if (n < 0) return Error::fromErrno("PAGEMAP_SCAN", errno);
    for (int i = 0; i < n; ++i) {
      // Adjacent THPs come back as one region: cut it into 2 MiB pages.
      for (uint64_t a = regions[i].start & ~(kThpSize - 1); a < regions[i].end; a += kThpSize) out.push_back({a, kThpSize, false});
    }
    if (arg.walkEnd <= start) break;
    start = arg.walkEnd;
  }
  return out;
}

Result<std::vector<HugeExtent>> KernelHugePageFinder::kpageflags(int fd, uint64_t start, uint64_t end) {
  const std::string flagsPath = procRoot_ + "/kpageflags";
  UniqueFd flags(::open(flagsPath.c_str(), O_RDONLY | O_CLOEXEC));
  if (flags.get() < 0) return Error::fromErrno("open " + flagsPath, errno);
  std::vector<HugeExtent> out;
  // One pagemap entry per 2 MiB step suffices: a PMD-mapped THP's first page is its head.
  for (uint64_t a = start & ~(kThpSize - 1); a < end; a += kThpSize) {
    uint64_t entry = 0;
    if (::pread(fd, &entry, sizeof entry, static_cast<off_t>(a / kPageSize * 8)) != sizeof entry)
      return Error::fromErrno("read pagemap", errno);
    if (!(entry & kPmPresent)) continue;
    const uint64_t pfn = entry & kPmPfnMask;
    if (pfn == 0) return Error("pagemap shows no page frame numbers (needs CAP_SYS_ADMIN)");
    uint64_t kflags = 0;
    if (::pread(flags.get(), &kflags, sizeof kflags, static_cast<off_t>(pfn * 8)) != sizeof kflags)
      return Error::fromErrno("read " + flagsPath, errno);
    if ((kflags & kKpfThp) && (kflags & kKpfCompoundHead)) out.push_back({a, kThpSize, false});
  }
  return out;
}

}  // namespace mtm::migrate
