#include "mtm/migrate/Placement.h"

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "mtm/Log.h"
#include "mtm/ProcMaps.h"
#include "mtm/migrate/PageList.h"

namespace mtm::migrate {
namespace {

// MADV_COLLAPSE (Linux 6.1, include/uapi/asm-generic/mman-common.h); glibc 2.36 lacks the name.
constexpr int kMadvCollapse = 25;

void addPages(NodePages& n, const PageEntry& e) {
  switch (e.kind) {
    case PageKind::Base:
      n.base += e.pages;
      break;
    case PageKind::Thp:
      n.thp += e.pages;
      break;
    case PageKind::Hugetlb:
      n.hugetlb += e.pages;
      break;
  }
}

}  // namespace

Result<Placement> queryPlacement(const MoverDeps& deps, int pid, const std::vector<AddressRange>& ranges, uint32_t batchPages) {
  auto vmas = readProcessVmas(deps.fs, pid);
  if (!vmas) return std::move(vmas).takeError();
  Placement out;
  out.pid = pid;
  std::vector<void*> addrs;
  std::vector<int> status;
  for (const auto& vma : *vmas) {
    if (vma.path == "[vsyscall]") continue;
    std::vector<AddressRange> wanted;
    if (ranges.empty()) wanted.push_back({vma.start, vma.end});
    for (const auto& r : ranges)
      if (std::max(r.start, vma.start) < std::min(r.end, vma.end))
        wanted.push_back({std::max(r.start, vma.start), std::min(r.end, vma.end)});
    if (wanted.empty()) continue;
    auto huge = deps.huge.find(pid, {vma}, wanted.front().start, wanted.back().end);
    if (!huge) return std::move(huge).takeError().context("finding huge pages of pid " + std::to_string(pid));
    const PageList list = buildPageList(wanted, {vma}, *huge, false);
    VmaPlacement vp;
    vp.vma = vma;
    for (size_t first = 0; first < list.entries.size(); first += batchPages) {
      const size_t count = std::min<size_t>(batchPages, list.entries.size() - first);
      const long r = queryNodes(deps.sys, pid, &list.entries[first], count, addrs, status);
      if (r < 0) return processFileError(pid, Error::fromErrno("move_pages query", static_cast<int>(-r)));
      for (size_t i = 0; i < count; ++i) {
        const PageEntry& e = list.entries[first + i];
        if (status[i] >= 0) {
          addPages(vp.byNode[status[i]], e);
          addPages(out.byNode[status[i]], e);
        } else {
          vp.notPresent += e.pages;
          out.notPresent += e.pages;
        }
      }
    }
    out.vmas.push_back(std::move(vp));
  }
  out.thpDetection = deps.huge.method();
  return out;
}

Result<uint64_t> collapseThps(const MoverDeps& deps, int pid, const std::vector<AddressRange>& ranges, const SharedPidfd& shared) {
  auto vmas = readProcessVmas(deps.fs, pid);
  if (!vmas) return std::move(vmas).takeError();
  const int pidfd = shared ? shared->get() : deps.sys.pidfdOpen(pid);
  if (pidfd < 0) return Error::fromErrno("pid " + std::to_string(pid) + ": pidfd_open", -pidfd);
  auto closeOwn = [&] {
    if (!shared) deps.sys.closeFd(pidfd);
  };
  uint64_t formed = 0, tried = 0;
  int lastErr = 0;
  for (const auto& r : ranges) {
    auto huge = deps.huge.find(pid, *vmas, r.start, r.end);
    if (!huge) {
      closeOwn();
      return std::move(huge).takeError();
    }
    for (uint64_t a = (r.start + kThpSize - 1) & ~(kThpSize - 1); a + kThpSize <= r.end; a += kThpSize) {
      const bool inVma =
          std::any_of(vmas->begin(), vmas->end(), [&](const Vma& v) { return !v.hugetlb() && v.start <= a && a + kThpSize <= v.end; });
      const bool already = std::any_of(huge->begin(), huge->end(), [&](const HugeExtent& h) { return h.start == a; });
      if (!inVma || already) continue;
      ++tried;
      long res = deps.sys.processMadvise(pidfd, {iovec{reinterpret_cast<void*>(a), kThpSize}}, kMadvCollapse);
      if (res >= 0)
        ++formed;
      else {
        lastErr = static_cast<int>(-res);
        MTM_DEBUG("collapse pid={} addr={:#x} error=\"{}\"", pid, a, std::strerror(lastErr));
      }
    }
  }
  closeOwn();
  if (tried > 0 && formed == 0) {
    std::string hint = lastErr == EINVAL  ? " (MADV_COLLAPSE needs Linux 6.1+ and THP enabled)"
                       : lastErr == EPERM ? " (needs CAP_SYS_ADMIN and ptrace access)"
                                          : "";
    return Error::fromErrno("pid " + std::to_string(pid) + ": process_madvise(MADV_COLLAPSE)", lastErr)
        .context("collapsing " + std::to_string(tried) + " ranges" + hint);
  }
  return formed;
}

}  // namespace mtm::migrate
