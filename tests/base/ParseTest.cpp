#include <catch2/catch.hpp>

#include "mtm/Parse.h"

using namespace mtm;

TEST_CASE("node lists follow the kernel's and numactl's grammar", "[parse]") {
  CHECK(parseNodeList("0").value() == std::vector<int>{0});
  CHECK(parseNodeList("0,2-3\n").value() == std::vector<int>{0, 2, 3});
  CHECK(parseNodeList("3,1,1-2").value() == std::vector<int>{1, 2, 3});
  CHECK(parseNodeList("").value().empty());
  CHECK(parseNodeList("\n").value().empty());
  for (const char* bad : {"a", "1-", "-1", "3-1", "1,,2", "1,", "0-99999"}) {
    INFO(bad);
    auto r = parseNodeList(bad);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message() == std::string("expected a node list like 0,2-3, got \"") + bad + "\"");
  }
  CHECK(formatNodeList({0, 1, 2, 5, 7, 8}) == "0-2,5,7-8");
  CHECK(formatNodeList({}) == "");
}

TEST_CASE("sizes, rates and percentages", "[parse]") {
  CHECK(parseSize("4096").value() == 4096);
  CHECK(parseSize("512MiB").value() == 512ull << 20);
  CHECK(parseSize("2G").value() == 2ull << 30);
  CHECK(parseSize("1.5GiB").value() == 3ull << 29);
  CHECK(parseSize("64kb").value() == 64 << 10);
  CHECK(parseSize(" 1 TiB ").value() == 1ull << 40);
  CHECK(parseSize("9x").error().message() == "expected a size like 512MiB or 2G, got \"9x\"");
  CHECK_FALSE(parseSize("").ok());
  CHECK_FALSE(parseSize("-1M").ok());
  CHECK_FALSE(parseSize("0.5").ok());  // not a whole number of bytes
  CHECK(parseRate("512MiB/s").value() == 512ull << 20);
  CHECK(parseRate("512MiB").error().message() == "expected a rate like 512MiB/s, got \"512MiB\"");
  CHECK(parsePercent("5%").value() == Approx(0.05));
  CHECK(parsePercent("0.5%").value() == Approx(0.005));
  CHECK_FALSE(parsePercent("101%").ok());
  CHECK_FALSE(parsePercent("5").ok());
  CHECK(formatBytes(512) == "512 B");
  CHECK(formatBytes(3ull << 29) == "1.5 GiB");
}

TEST_CASE("kernel text formats", "[parse]") {
  auto m = parseNodeMeminfo(
      "Node 1 MemTotal:       515924 kB\nNode 1 MemFree:        506648 kB\n"
      "Node 1 HugePages_Total:     0\n");
  REQUIRE(m.ok());
  CHECK(m->at("MemTotal") == 515924ull * 1024);
  CHECK(m->at("MemFree") == 506648ull * 1024);
  CHECK(m->at("HugePages_Total") == 0);
  auto bad = parseNodeMeminfo("Node 1 MemTotal: 5 kB\ngarbage\n");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message() == "line 2: expected \"Node N Key: value [kB]\", got \"garbage\"");

  CHECK(parseIntRow("10 20 30 40\n").value() == std::vector<int>{10, 20, 30, 40});
  CHECK_FALSE(parseIntRow("10 x").ok());
  CHECK(parseBracketChoice("always [madvise] never\n").value() == "madvise");
  CHECK_FALSE(parseBracketChoice("always madvise").ok());
  CHECK(parseUnsigned(" 42\n").value() == 42);
  CHECK_FALSE(parseUnsigned("42x").ok());
  CHECK(parseUnsigned("ff", 16).value() == 255);
  CHECK_FALSE(parseUnsigned("0xff", 16).ok());
  CHECK_FALSE(parseUnsigned("-1", 16).ok());
}

TEST_CASE("printable text: control characters and malformed UTF-8 are found where they start", "[parse]") {
  using mtm::firstNonText;
  CHECK_FALSE(firstNonText("/run/mtm/mtmd.sock").has_value());
  CHECK_FALSE(firstNonText("tab\there, é, 😀, 中").has_value());
  CHECK(firstNonText(std::string("a\0b", 3)) == 1u);
  CHECK(firstNonText("ab\x1b[2J") == 2u);
  CHECK(firstNonText("\x7f") == 0u);
  CHECK(firstNonText("ok\xfc\xfb") == 2u);        // not a lead byte
  CHECK(firstNonText("ok\xc3") == 2u);            // ends inside a sequence
  CHECK(firstNonText("ok\xc3(") == 2u);           // a lead byte without its continuation
  CHECK(firstNonText("\xc0\xaf") == 0u);          // overlong '/'
  CHECK(firstNonText("\xed\xa0\x80") == 0u);      // a surrogate
  CHECK(firstNonText("\xf4\x90\x80\x80") == 0u);  // past U+10FFFF
}
