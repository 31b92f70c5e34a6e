#include <catch2/catch.hpp>

#include "mtm/migrate/PageList.h"

using namespace mtm;
using namespace mtm::migrate;

namespace {
constexpr uint64_t kB = 0x7f0000000000;
constexpr uint64_t kM = 1 << 20;

Vma anon(uint64_t start, uint64_t end) {
  Vma v;
  v.start = start;
  v.end = end;
  v.perms = "rw-p";
  return v;
}
}  // namespace

TEST_CASE("4 KiB pages one address each, THPs one address, hugetlb pages one address", "[pagelist]") {
  std::vector<Vma> vmas{anon(kB, kB + 8 * kM)};
  Vma huge = anon(kB + 16 * kM, kB + 20 * kM);
  huge.kernelPageSize = 2 * kM;
  vmas.push_back(huge);
  std::vector<HugeExtent> extents{{kB + 2 * kM, 2 * kM, false}, {kB + 16 * kM, 2 * kM, true}, {kB + 18 * kM, 2 * kM, true}};
  auto list = buildPageList({{kB + 2 * kM - 8192, kB + 4 * kM + 4096}, {kB + 16 * kM, kB + 20 * kM}}, vmas, extents, false);
  REQUIRE(list.entries.size() == 2 + 1 + 1 + 2);
  CHECK(list.entries[0] == PageEntry{kB + 2 * kM - 8192, 1, PageKind::Base});
  CHECK(list.entries[2] == PageEntry{kB + 2 * kM, 512, PageKind::Thp});
  CHECK(list.entries[3] == PageEntry{kB + 4 * kM, 1, PageKind::Base});
  CHECK(list.entries[4] == PageEntry{kB + 16 * kM, 512, PageKind::Hugetlb});
  CHECK(list.unmappedPages == 0);
  CHECK(list.toSplit.empty());
}

TEST_CASE("a THP covered partly moves whole, or is listed for splitting", "[pagelist]") {
  std::vector<Vma> vmas{anon(kB, kB + 4 * kM)};
  std::vector<HugeExtent> thp{{kB, 2 * kM, false}};
  auto whole = buildPageList({{kB + kM, kB + kM + 8192}}, vmas, thp, false);
  REQUIRE(whole.entries.size() == 1);
  CHECK(whole.entries[0] == PageEntry{kB, 512, PageKind::Thp});
  auto split = buildPageList({{kB + kM, kB + 3 * kM}}, vmas, thp, true);
  REQUIRE(split.toSplit.size() == 1);
  CHECK(split.entries.size() == 256 + 256);
  CHECK(split.entries.front().addr == kB + kM);
}

TEST_CASE("overlapping ranges list each page once -- unmapped parts are counted", "[pagelist]") {
  std::vector<Vma> vmas{anon(kB, kB + 10 * 4096), anon(kB + 20 * 4096, kB + 30 * 4096)};
  auto list = buildPageList({{kB + 5 * 4096, kB + 25 * 4096}, {kB, kB + 8 * 4096}}, vmas, {}, false);
  CHECK(list.entries.size() == 10 + 5);
  CHECK(list.unmappedPages == 10);
  CHECK(wholeAddressSpace(vmas).size() == 2);
}
