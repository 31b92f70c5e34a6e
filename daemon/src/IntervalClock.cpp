#include "mtm/daemon/IntervalClock.h"

#include <algorithm>
#include <cstdint>

namespace mtm::daemon {

IntervalClock::Clock::time_point IntervalClock::wake(std::chrono::milliseconds lead) const {
  return primed_ || lead.count() <= 0 ? end_ : end_ - lead;
}

int IntervalClock::timeoutMs(std::chrono::milliseconds lead) const {
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(wake(lead) - Clock::now()).count();
  return static_cast<int>(std::max<int64_t>(0, left));
}

IntervalClock::Due IntervalClock::poll(std::chrono::milliseconds lead, std::chrono::milliseconds period) {
  const auto now = Clock::now();
  if (now >= end_) {
    end_ = std::max(end_ + period, now);
    primed_ = false;
    return Due::interval;
  }
  if (!primed_ && lead.count() > 0 && now >= end_ - lead) {
    primed_ = true;
    return Due::prime;
  }
  return Due::nothing;
}

}  // namespace mtm::daemon
