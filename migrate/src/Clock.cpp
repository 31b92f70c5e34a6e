#include "mtm/migrate/Clock.h"

#include <algorithm>
#include <thread>

namespace mtm::migrate {

void SteadyClock::sleepFor(Duration d) {
  if (d > Duration::zero()) std::this_thread::sleep_for(d);
}

Clock::Duration Pacer::reserve(uint64_t bytes, Clock::TimePoint now) {
  if (rate_ == 0) return Clock::Duration::zero();
  const auto cost =
      std::chrono::duration_cast<Clock::Duration>(std::chrono::duration<double>(static_cast<double>(bytes) / static_cast<double>(rate_)));
  next_ = std::max(next_, now) + cost;
  return std::max(Clock::Duration::zero(), next_ - burst_ - now);
}

}  // namespace mtm::migrate
