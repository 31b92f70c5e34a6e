#pragma once
// Command-line sizes for the test workloads: "256M", "1G" in mtm's size grammar; a malformed
// size is a usage error (exit 2).

#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "mtm/Parse.h"

inline uint64_t sizeArg(const char* text) {
  auto v = mtm::parseSize(text);
  if (!v) {
    std::fprintf(stderr, "%s\n", v.error().message().c_str());
    std::exit(2);
  }
  return *v;
}
