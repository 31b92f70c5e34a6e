#include "mtm/policy/Policy.h"

namespace mtm::policy {

Status Policy::hint(const Hint&) {
  return Error("this policy takes no hints: hints feed predictive placement (policy.name: mtm with policy.predict.mode: on)");
}

}  // namespace mtm::policy
