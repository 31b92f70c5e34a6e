// Catch2's main for every mtm test program. A program may define
// `int mtmTestPrecondition()` returning 77 (with a printed reason) to be skipped by ctest.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

__attribute__((weak)) int mtmTestPrecondition() { return 0; }

int main(int argc, char** argv) {
  Catch::Session session;
  if (int rc = session.applyCommandLine(argc, argv); rc != 0) return rc;
  // Test discovery (--list-test-names-only) must work where the tests themselves would skip.
  if (!session.configData().listTestNamesOnly) {
    if (int rc = mtmTestPrecondition(); rc != 0) return rc;
  }
  return session.run();
}
