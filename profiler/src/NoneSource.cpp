// The "none" profiler source: always available, never samples anything.
#include "mtm/Registry.h"
#include "mtm/profiler/Source.h"

namespace mtm::profiler {
namespace {

class NoneSource final : public Source {
 public:
  Status probe() override { return {}; }
};

const bool kRegistered = Registry<Source>::add(
    "none", "samples nothing (every region stays cold)", [](const Source::Context&) { return std::make_unique<NoneSource>(); });

}  // namespace
}  // namespace mtm::profiler
