#pragma once
// When a loop runs the next profiling interval, and when it primes the profiler before it
// (Profiler::primeLead(): accessed bits cleared a window ahead of the read).

#include <chrono>

namespace mtm::daemon {

class IntervalClock {
 public:
  using Clock = std::chrono::steady_clock;
  enum class Due { nothing, prime, interval };

  explicit IntervalClock(std::chrono::milliseconds period) : end_(Clock::now() + period) {}

  // When something is due next: `lead` before the interval's end (prime), then its end.
  Clock::time_point wake(std::chrono::milliseconds lead) const;
  // Milliseconds from now until wake(lead), at least 0: a poll(2)-style timeout.
  int timeoutMs(std::chrono::milliseconds lead) const;
  // What is due now. After `interval`, the next one ends `period` after this one (or from now,
  // when the loop fell behind).
  Due poll(std::chrono::milliseconds lead, std::chrono::milliseconds period);

 private:
  Clock::time_point end_;
  bool primed_ = false;
};

}  // namespace mtm::daemon
