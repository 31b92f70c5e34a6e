#pragma once
// Time for budgets: a real steady clock, or a test's fake one that moves only when told.

#include <chrono>

namespace mtm::migrate {

class Clock {
 public:
  using Duration = std::chrono::nanoseconds;
  using TimePoint = std::chrono::time_point<std::chrono::steady_clock, Duration>;
  virtual ~Clock() = default;
  virtual TimePoint now() = 0;
  virtual void sleepFor(Duration d) = 0;
};

class SteadyClock final : public Clock {
 public:
  TimePoint now() override { return std::chrono::steady_clock::now(); }
  void sleepFor(Duration d) override;
};

// Spends bytes at a rate: reserve() says how long to wait before sending them so that over any
// window T no more than rate * (T + burst) bytes go out.
class Pacer {
 public:
  Pacer(uint64_t bytesPerSecond, Clock::Duration burst) : rate_(bytesPerSecond), burst_(burst) {}
  // 0 bytes/s means unlimited: never a wait.
  Clock::Duration reserve(uint64_t bytes, Clock::TimePoint now);

 private:
  uint64_t rate_;
  Clock::Duration burst_;
  Clock::TimePoint next_{};  // when everything reserved so far would have gone out at the rate
};

}  // namespace mtm::migrate
