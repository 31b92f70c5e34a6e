#pragma once
// Which parts of an address range are mapped by huge pages: PMD-mapped THPs and hugetlb pages.
// Each must be passed to move_pages with one address (its first) to migrate whole.

#include <cstdint>
#include <string>
#include <vector>

#include "mtm/ProcMaps.h"
#include "mtm/Result.h"

namespace mtm::migrate {

struct HugeExtent {
  uint64_t start = 0;  // aligned to size
  uint64_t size = 0;   // 2 MiB for a THP; the hugetlb page size otherwise
  bool hugetlb = false;
  bool operator==(const HugeExtent&) const = default;
};

class HugePageFinder {
 public:
  virtual ~HugePageFinder() = default;
  // Huge pages of `pid` that lie in [start, end), sorted. A THP that straddles a bound is
  // included whole. `vmas` is the process's smaps (hugetlb mappings are known from it).
  virtual Result<std::vector<HugeExtent>> find(int pid, const std::vector<Vma>& vmas, uint64_t start, uint64_t end) = 0;
  // How THPs are found: "pagemap_scan", "kpageflags" or "none".
  virtual std::string method() const = 0;
};

// The real kernel: PAGEMAP_SCAN's PAGE_IS_HUGE where the kernel has it (Linux 6.7+), else
// pagemap PFNs with /proc/kpageflags THP bits (root), else none -- then every 4 KiB address
// is passed and a THP's tail entries come back EBUSY while it still moves whole.
class KernelHugePageFinder final : public HugePageFinder {
 public:
  explicit KernelHugePageFinder(std::string procRoot = "/proc");
  Result<std::vector<HugeExtent>> find(int pid, const std::vector<Vma>& vmas, uint64_t start, uint64_t end) override;
  std::string method() const override;

 private:
  enum class Method { Unknown, PagemapScan, KpageFlags, None };
  Result<std::vector<HugeExtent>> scan(int fd, uint64_t start, uint64_t end);
  Result<std::vector<HugeExtent>> kpageflags(int fd, uint64_t start, uint64_t end);
  std::string procRoot_;
  Method method_ = Method::Unknown;
};

}  // namespace mtm::migrate
