#pragma once
// Where a process's pages are: per node, per VMA, 4 KiB pages, THPs and hugetlb pages apart.
// Read with move_pages(2) given no destination (a query: nothing moves).

#include <map>
#include <vector>

#include "mtm/ProcMaps.h"
#include "mtm/migrate/Mover.h"

namespace mtm::migrate {

struct NodePages {  // in 4 KiB pages
  uint64_t base = 0;
  uint64_t thp = 0;
  uint64_t hugetlb = 0;
  uint64_t total() const { return base + thp + hugetlb; }
};

struct VmaPlacement {
  Vma vma;
  std::map<int, NodePages> byNode;
  uint64_t notPresent = 0;  // pages never touched, swapped out, or not migratable (errors)
};

struct Placement {
  int pid = 0;
  std::vector<VmaPlacement> vmas;
  std::map<int, NodePages> byNode;
  uint64_t notPresent = 0;
  std::string thpDetection;  // how THPs were found: pagemap_scan, kpageflags, none
};

// `ranges` empty: every VMA. Errors: the process is gone or may not be read.
Result<Placement> queryPlacement(const MoverDeps& deps, int pid, const std::vector<AddressRange>& ranges, uint32_t batchPages = 4096);

// Re-forms THPs in the 2 MiB-aligned parts of `ranges` that are not THPs now, with
// process_madvise(MADV_COLLAPSE) (Linux 6.1+), through `pidfd` where given, else one opened for
// the call. Returns how many formed; errors say why none could.
Result<uint64_t> collapseThps(const MoverDeps& deps, int pid, const std::vector<AddressRange>& ranges, const SharedPidfd& pidfd = nullptr);

}  // namespace mtm::migrate
