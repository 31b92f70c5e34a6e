#pragma once
// Skipping a test case: Catch2 v2 has no skip, so a case that cannot run here prints a line
// starting "SKIP: " and returns; ctest's SKIP_REGULAR_EXPRESSION (tests/CMakeLists.txt) then
// reports it as skipped, never as passed.

#include <unistd.h>

#include <catch2/catch.hpp>

// Skips the enclosing test case with `why` (a stream expression) when not running as root.
#define MTM_REQUIRE_ROOT(why)            \
  do {                                   \
    if (::geteuid() != 0) {              \
      WARN("SKIP: needs root: " << why); \
      return;                            \
    }                                    \
  } while (0)

// Skips the enclosing test case with `why`.
#define MTM_SKIP(why)      \
  do {                     \
    WARN("SKIP: " << why); \
    return;                \
  } while (0)
