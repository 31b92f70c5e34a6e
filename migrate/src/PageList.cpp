#include "mtm/migrate/PageList.h"

#include <algorithm>
#include <cerrno>

namespace mtm::migrate {

PageList buildPageList(const std::vector<AddressRange>& ranges, const std::vector<Vma>& vmas, const std::vector<HugeExtent>& huge,
                       bool splitPartial) {
  PageList list;
  std::vector<AddressRange> sorted = ranges;
  std::sort(sorted.begin(), sorted.end(), [](auto& a, auto& b) { return a.start < b.start; });
  uint64_t covered = 0;  // everything below this address is already listed
  for (auto r : sorted) {
    r.start = std::max(r.start & ~(kPageSize - 1), covered);
    r.end = (r.end + kPageSize - 1) & ~(kPageSize - 1);
    if (r.start >= r.end) continue;
    uint64_t mapped = 0;
    for (const auto& v : vmas) {
      uint64_t s = std::max(r.start, v.start), e = std::min(r.end, v.end);
      if (s >= e) continue;
      mapped += e - s;
      auto h = std::lower_bound(huge.begin(), huge.end(), s, [](const HugeExtent& x, uint64_t a) { return x.start + x.size <= a; });
      uint64_t a = s;
      while (a < e) {
        if (h != huge.end() && h->start < e && a >= h->start) {
          const bool whole = h->start >= s && h->start + h->size <= e;
          if (h->hugetlb || whole || !splitPartial) {
            if (h->start >= covered)
              list.entries.push_back(
                  {h->start, static_cast<uint32_t>(h->size / kPageSize), h->hugetlb ? PageKind::Hugetlb : PageKind::Thp});
            a = h->start + h->size;
          } else {
            list.toSplit.push_back(*h);
            for (uint64_t end = std::min(e, h->start + h->size); a < end; a += kPageSize) list.entries.push_back({a});
          }
          covered = std::max(covered, a);
          ++h;
          continue;
        }
        const uint64_t stop = (h != huge.end() && h->start < e) ? h->start : e;
        for (; a < stop; a += kPageSize) list.entries.push_back({a});
      }
      covered = std::max(covered, e);
    }
    list.unmappedPages += (r.end - r.start - mapped) / kPageSize;
  }
  return list;
}

std::vector<AddressRange> wholeAddressSpace(const std::vector<Vma>& vmas) {
  std::vector<AddressRange> out;
  for (const auto& v : vmas)
    if (v.path != "[vsyscall]") out.push_back({v.start, v.end});
  return out;
}

long queryNodes(MemorySyscalls& sys, int pid, const PageEntry* first, size_t count, std::vector<void*>& addrs, std::vector<int>& status) {
  addrs.resize(count);
  status.assign(count, -ENOENT);
  for (size_t i = 0; i < count; ++i) addrs[i] = reinterpret_cast<void*>(first[i].addr);
  return sys.movePages(pid, count, addrs.data(), nullptr, status.data(), 0);
}

}  // namespace mtm::migrate
