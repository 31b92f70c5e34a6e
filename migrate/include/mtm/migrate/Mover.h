#pragma once
// Carries out a plan: moves pages between NUMA nodes and says exactly what happened.

#include <cstdint>
#include <string_view>

#include "mtm/policy/Policy.h"

namespace mtm::migrate {

struct MoveStats {
  uint64_t pagesRequested = 0;
  uint64_t pagesMoved = 0;
  uint64_t pagesFailed = 0;
};

class Mover {
 public:
  static constexpr std::string_view kRole = "mover";
  virtual ~Mover() = default;
  virtual MoveStats execute(const policy::Plan& plan) = 0;
};

}  // namespace mtm::migrate
