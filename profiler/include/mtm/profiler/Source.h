#pragma once
// A source of page-access samples (hardware sampling, accessed bits, page faults, DAMON).

#include <string_view>

#include "mtm/Result.h"

namespace mtm::profiler {

class Source {
 public:
  static constexpr std::string_view kRole = "profiler source";
  virtual ~Source() = default;
  // Whether the source can run on this machine; the error says why not and what to do.
  virtual Status probe() = 0;
};

}  // namespace mtm::profiler
