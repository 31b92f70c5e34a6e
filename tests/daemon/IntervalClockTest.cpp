#include "mtm/daemon/IntervalClock.h"

#include <catch2/catch.hpp>
#include <thread>

using mtm::daemon::IntervalClock;
using namespace std::chrono_literals;

TEST_CASE("the interval clock primes a lead before each interval, once, then runs it", "[daemon]") {
  const auto start = IntervalClock::Clock::now();
  IntervalClock clock(100ms);
  CHECK(clock.wake(30ms) <= start + 80ms);
  CHECK(clock.timeoutMs(30ms) <= 70);  // the lead counted: not the 100 ms to the end
  CHECK(clock.poll(30ms, 100ms) == IntervalClock::Due::nothing);
  std::this_thread::sleep_until(clock.wake(30ms));
  CHECK(clock.poll(30ms, 100ms) == IntervalClock::Due::prime);
  CHECK(clock.poll(30ms, 100ms) == IntervalClock::Due::nothing);  // primed once
  CHECK(clock.wake(30ms) >= start + 100ms);                       // now the interval's end
  std::this_thread::sleep_until(clock.wake(30ms));
  CHECK(clock.poll(30ms, 100ms) == IntervalClock::Due::interval);
  CHECK(clock.wake(30ms) >= start + 170ms);  // the next one's prime
}

TEST_CASE("without a lead, or when the loop is late, the interval runs unprimed", "[daemon]") {
  IntervalClock clock(20ms);
  std::this_thread::sleep_for(30ms);
  CHECK(clock.timeoutMs(5ms) == 0);                              // overdue: at once, never negative
  CHECK(clock.poll(5ms, 20ms) == IntervalClock::Due::interval);  // late: no prime this time
  std::this_thread::sleep_until(clock.wake(0ms));
  CHECK(clock.poll(0ms, 20ms) == IntervalClock::Due::interval);
}
