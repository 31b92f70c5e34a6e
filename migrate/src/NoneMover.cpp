// The "none" mover: moves nothing; every requested page is reported deferred.
#include "mtm/Registry.h"
#include "mtm/migrate/Mover.h"

namespace mtm::migrate {
namespace {

class NoneMover final : public Mover {
 public:
  MoveStats execute(const std::vector<MoveRequest>& requests, const ProgressFn&) override {
    MoveStats stats;
    for (const auto& r : requests)
      for (const auto& range : r.ranges) stats.pagesRequested += (range.end - range.start + kPageSize - 1) / kPageSize;
    stats.pagesDeferred = stats.pagesRequested;
    return stats;
  }
};

const bool kRegistered =
    Registry<Mover>::add("none", "moves nothing (observation only)", [](const Mover::Context&) { return std::make_unique<NoneMover>(); });

}  // namespace
}  // namespace mtm::migrate
