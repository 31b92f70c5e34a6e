// The "none" mover: moves nothing and reports every page as not moved.
#include "mtm/Registry.h"
#include "mtm/migrate/Mover.h"

namespace mtm::migrate {
namespace {

class NoneMover final : public Mover {
 public:
  MoveStats execute(const policy::Plan& plan) override {
    MoveStats stats;
    for (const auto& m : plan.moves) stats.pagesRequested += (m.end - m.start) / 4096;
    return stats;
  }
};

const bool kRegistered = Registry<Mover>::add(
    "none", "moves nothing (observation only)", [] { return std::make_unique<NoneMover>(); });

}  // namespace
}  // namespace mtm::migrate
