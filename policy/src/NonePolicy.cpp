// The "none" policy: first touch. Pages stay wherever the kernel first put them.
#include "mtm/Registry.h"
#include "mtm/policy/Policy.h"

namespace mtm::policy {
namespace {

class NonePolicy final : public Policy {
 public:
  Plan plan(const profiler::Snapshot&, const config::TierMap&) override { return {}; }
};

const bool kRegistered = Registry<Policy>::add("none", "first touch: plans no moves (baseline)",
                                               [](const Policy::Context&) { return std::make_unique<NonePolicy>(); });

}  // namespace
}  // namespace mtm::policy
