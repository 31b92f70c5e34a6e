// The "none" profiler source: always available, observes nothing (every region stays cold).
#include "mtm/Registry.h"
#include "mtm/profiler/Source.h"

namespace mtm::profiler {
namespace {

class NoneSource final : public Source {
 public:
  Status probe() override { return {}; }
  Status attach(int, const SharedPidfd&) override { return {}; }
  void detach(int) override {}
  Result<uint64_t> observe(int, RegionSet&, Grant) override { return uint64_t{0}; }
};

const bool kRegistered = Registry<Source>::add("none", "observes nothing (every region stays cold)",
                                               [](const Source::Context&) { return std::make_unique<NoneSource>(); });

}  // namespace
}  // namespace mtm::profiler
