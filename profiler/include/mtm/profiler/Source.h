#pragma once
// A source of page-access samples (hardware sampling, accessed bits, page faults, DAMON).

#include <string_view>

#include "mtm/Result.h"
#include "mtm/config/Config.h"

namespace mtm::profiler {

class Source {
 public:
  static constexpr std::string_view kRole = "profiler source";
  struct Context {
    const config::Config& config;
  };
  virtual ~Source() = default;
  // Whether the source can run on this machine; the error says why not and what to do.
  virtual Status probe() = 0;
};

}  // namespace mtm::profiler
