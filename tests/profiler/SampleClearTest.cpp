#include <catch2/catch.hpp>

#include "mtm/profiler/AbitScanner.h"
#include "mtm/profiler/AccessedBitClear.h"

using namespace mtm::profiler;

TEST_CASE("of a sample just read only the pages whose bit is set are cleared -- all are read again", "[profiler][abit]") {
  constexpr uint64_t kThp = 0x40000000, kMiB = 1 << 20;
  const std::vector<uint64_t> next = {
      0x1000,           // accessed 4 KiB page: cleared
      0x5000,           // present, bit clear: read again, not cleared
      0x9000,           // not present: read again
      kThp + kMiB,      // in an accessed THP: its head, the whole THP cleared
      kThp + 2 * kMiB,  // in a THP whose PMD bit is clear
      kThp + 4096,      // the first THP again: once
      0xd000,           // a racing change (fault): read again, not cleared
  };
  const std::vector<uint8_t> flags = {
      kAbitPresent | kAbitAccessed,
      kAbitPresent,
      0,
      kAbitPresent | kAbitAccessed | kAbitHuge,
      kAbitPresent | kAbitHuge,
      kAbitPresent | kAbitAccessed | kAbitHuge,
      kAbitFault,
  };
  const SampleClear s = sampleClear(next, flags.data());
  CHECK(s.pending == std::vector<uint64_t>{0x1000, 0x5000, 0x9000, kThp, kThp + 2 * kMiB, 0xd000});
  REQUIRE(s.ranges.size() == 2);
  CHECK((s.ranges[0].start == 0x1000 && s.ranges[0].end == 0x2000));
  CHECK((s.ranges[1].start == kThp && s.ranges[1].end == kThp + 2 * kMiB));
  CHECK(s.alreadyClear == 2);
}

TEST_CASE("pages whose clear was refused or not reached are not read next", "[profiler][abit]") {
  std::vector<uint64_t> pending = {0x1000, 0x5000, 0x9000, 0x40000000, 0x40200000, 0xd000};
  const std::vector<iovec> notCleared = {
      {reinterpret_cast<void*>(0x40000000), 2 << 20},  // a THP
      {reinterpret_cast<void*>(0x4000), 0x2000},       // 0x4000-0x6000
  };
  CHECK(dropPagesIn(pending, notCleared) == 2);
  CHECK(pending == std::vector<uint64_t>{0x1000, 0x9000, 0x40200000, 0xd000});
  CHECK(dropPagesIn(pending, {}) == 0);
}
