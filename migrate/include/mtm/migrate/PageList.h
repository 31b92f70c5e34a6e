#pragma once
// Turns address ranges into the addresses move_pages(2) is given: one per 4 KiB page, one per
// huge page (its first address), so that THPs and hugetlb pages migrate whole.

#include <cstdint>
#include <vector>

#include "mtm/MoveRequest.h"
#include "mtm/ProcMaps.h"
#include "mtm/migrate/HugePages.h"
#include "mtm/migrate/Syscalls.h"

namespace mtm::migrate {

enum class PageKind : uint8_t { Base, Thp, Hugetlb };

struct PageEntry {
  uint64_t addr = 0;
  uint32_t pages = 1;  // 4 KiB pages it stands for
  PageKind kind = PageKind::Base;
  bool operator==(const PageEntry&) const = default;
};

struct PageList {
  std::vector<PageEntry> entries;   // in address order
  std::vector<HugeExtent> toSplit;  // THPs covered only partly, when splitting was asked for
  uint64_t unmappedPages = 0;       // parts of the ranges no VMA maps
};

// Ranges are widened to whole pages and clipped to the VMAs. A THP that a range covers partly
// is moved whole, unless splitPartial: then it is listed in toSplit and only its covered
// pages are entries. hugetlb pages always move whole.
PageList buildPageList(const std::vector<AddressRange>& ranges, const std::vector<Vma>& vmas, const std::vector<HugeExtent>& huge,
                       bool splitPartial);

// Where `count` entries from `first` lie now, asked of move_pages(2) without nodes: status[i]
// becomes a node or -errno. Returns the call's result (-errno: the whole call failed). `addrs` and
// `status` are the caller's, kept across batches.
long queryNodes(MemorySyscalls& sys, int pid, const PageEntry* first, size_t count, std::vector<void*>& addrs, std::vector<int>& status);

// Every VMA of a process, as ranges (the [vsyscall] page, which no process can migrate, left out).
std::vector<AddressRange> wholeAddressSpace(const std::vector<Vma>& vmas);

}  // namespace mtm::migrate
