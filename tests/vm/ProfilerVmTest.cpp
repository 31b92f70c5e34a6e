// The profiler in the VM lab's Debian 6.12 guest (5-level paging under TCG): the BPF program
// loads, derives the direct-map base, reads exact accessed bits, and finds a known hot set.
#include <catch2/catch.hpp>

#include "VmLab.h"

TEST_CASE("the accessed-bit profiler works in the 6.12 guest", "[vm][profiler]") {
  auto r =
      mtm::test::vmlab({"--nodes", "2", "--node-mem", "768M,512M", "--", "mtm_host_tests", "[profiler-e2e],[bpf]", "--use-colour", "no"});
  INFO(r.out << r.err);
  CHECK(mtm::test::failReason(r.out) == "");
  CHECK(r.exitCode == 0);
  CHECK(r.out.find("All tests passed") != std::string::npos);
}

TEST_CASE("the damon_vaddr source drives DAMON through sysfs in the 6.12 guest and cleans up", "[vm][profiler][damon]") {
  auto r = mtm::test::vmlab({"--nodes", "2", "--node-mem", "768M,512M", "--add",
                             mtm::test::sourceDir() + "/tests/vm/damon-source.sh:/bin/damon-source", "--", "damon-source"});
  INFO(r.out << r.err);
  CHECK(mtm::test::failReason(r.out) == "");
  CHECK(r.exitCode == 0);
  CHECK(r.out.find("PASS damon-source") != std::string::npos);
}
