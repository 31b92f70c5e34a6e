// Migration for real: Debian 6.12 in a 4-node guest, a writer that never stops writing.
#include <catch2/catch.hpp>

#include "VmLab.h"

TEST_CASE("pages move 0 -> 2 -> 3 -> 0 under a budget while written, THPs whole, no byte lost", "[vm][migrate]") {
  auto r = mtm::test::vmlab({"--nodes", "4", "--node-mem", "768M,512M,512M,512M", "--add",
                             mtm::test::sourceDir() + "/tests/vm/migrate-e2e.sh:/bin/migrate-e2e", "--", "migrate-e2e"});
  INFO(r.out << r.err);
  CHECK(r.exitCode == 0);
  CHECK(r.out.find("PASS migrate-e2e") != std::string::npos);
  CHECK(r.out.find("wrong_words=0") != std::string::npos);
}
