#pragma once
// Invariant checks: a broken invariant is a bug, so it aborts with file:line, in every build type.

#include <cstdio>
#include <cstdlib>

#define MTM_CHECK(cond)                                                             \
  do {                                                                              \
    if (!(cond)) {                                                                  \
      std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                 \
    }                                                                               \
  } while (0)
