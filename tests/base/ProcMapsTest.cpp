#include <catch2/catch.hpp>

#include "mtm/ProcMaps.h"

using namespace mtm;

TEST_CASE("maps and smaps lines", "[procmaps]") {
  auto maps = parseMaps(
      "55d0c0a00000-55d0c0a21000 rw-p 00000000 00:00 0                          [heap]\n"
      "7f1c2e000000-7f1c2e200000 rw-s 00000000 00:10 12345                      /dev/hugepages/x (deleted)\n"
      "7ffd4a3f0000-7ffd4a411000 rw-p 00000000 00:00 0 \n");
  REQUIRE(maps.ok());
  REQUIRE(maps->size() == 3);
  CHECK((*maps)[0].start == 0x55d0c0a00000);
  CHECK((*maps)[0].end == 0x55d0c0a21000);
  CHECK((*maps)[0].path == "[heap]");
  CHECK((*maps)[1].path == "/dev/hugepages/x (deleted)");
  CHECK((*maps)[2].path.empty());

  auto smaps = parseSmaps(
      "7f0000000000-7f0010000000 rw-p 00000000 00:00 0 \n"
      "Size:             262144 kB\nKernelPageSize:        4 kB\nRss:              262144 kB\n"
      "AnonHugePages:    131072 kB\nVmFlags: rd wr mr mw me ac hg\n"
      "7f1c2e000000-7f1c2e200000 rw-s 00000000 00:10 12345 /dev/hugepages/x\nKernelPageSize:     2048 kB\n");
  REQUIRE(smaps.ok());
  CHECK((*smaps)[0].anonHugeBytes == 128u << 20);
  CHECK((*smaps)[0].rssBytes == 256u << 20);
  CHECK_FALSE((*smaps)[0].hugetlb());
  CHECK((*smaps)[1].hugetlb());
  CHECK((*smaps)[1].kernelPageSize == 2u << 20);

  auto bad = parseMaps("hello world\n");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message() == "line 1: not a maps line: \"hello world\"");
}

TEST_CASE("address ranges on the command line", "[procmaps]") {
  CHECK(parseAddressRange("0x1000-0x3000").value() == std::make_pair<uint64_t, uint64_t>(0x1000, 0x3000));
  CHECK(parseAddressRange("7f00-7f10").value() == std::make_pair<uint64_t, uint64_t>(0x7f00, 0x7f10));
  CHECK(parseAddressRange("0x3000-0x1000").error().message() ==
        "expected an address range like 0x7f0000000000-0x7f0010000000 (start below end), got \"0x3000-0x1000\"");
  CHECK_FALSE(parseAddressRange("0x1000").ok());
}
