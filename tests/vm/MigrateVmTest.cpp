// Migration for real: Debian 6.12 in a 4-node guest, a writer that never stops writing.
#include <catch2/catch.hpp>

#include "VmLab.h"

namespace {
std::string writerLib() { return mtm::test::sourceDir() + "/tests/vm/writer-lib.sh:/bin/writer-lib.sh"; }
}  // namespace

TEST_CASE("pages move 0 -> 2 -> 3 -> 0 under a budget while written, THPs whole, no byte lost", "[vm][migrate]") {
  auto r = mtm::test::vmlab({"--nodes", "4", "--node-mem", "768M,512M,512M,512M", "--add", writerLib(), "--add",
                             mtm::test::sourceDir() + "/tests/vm/migrate-e2e.sh:/bin/migrate-e2e", "--", "migrate-e2e"});
  INFO(r.out << r.err);
  CHECK(mtm::test::failReason(r.out) == "");
  CHECK(r.exitCode == 0);
  CHECK(r.out.find("PASS migrate-e2e") != std::string::npos);
  CHECK(r.out.find("wrong_words=0") != std::string::npos);
}

// The kernel side of the policy's THP split and collapse (the decision itself needs exact access
// samples, tested on synthetic ones in tests/policy): a partly covered THP split and only its
// covered pages moved, the rest following, the THP re-formed where they went; without
// --split-thp a partly covered THP moves whole.
TEST_CASE("a THP is split and moved in parts then collapsed again while written and no byte is lost", "[vm][migrate]") {
  auto r = mtm::test::vmlab({"--nodes", "4", "--node-mem", "256M,256M,256M,256M", "--add", writerLib(), "--add",
                             mtm::test::sourceDir() + "/tests/vm/thp-split-e2e.sh:/bin/thp-split-e2e", "--", "thp-split-e2e"});
  INFO(r.out << r.err);
  CHECK(mtm::test::failReason(r.out) == "");
  CHECK(r.exitCode == 0);
  CHECK(r.out.find("PASS thp-split-e2e") != std::string::npos);
  CHECK(r.out.find("wrong_words=0") != std::string::npos);
}
