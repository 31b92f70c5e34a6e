#pragma once
// Waiting that degrades from spinning to yielding to sleeping, so ranks that outnumber the cores
// still progress, and that gives up: on a peer that died, left or aborted, or after the
// communicator's timeout without progress.

#include <chrono>
#include <cstdint>

#include "Status.h"

namespace cxlccl {

class Comm;

// Sleeps that double from 1 µs up to a limit.
class Backoff {
 public:
  void sleepLonger(std::chrono::microseconds limit);

 private:
  std::chrono::microseconds next_{1};
};

class Waiter {
 public:
  explicit Waiter(Comm& comm);
  // Called after a round that moved something.
  void progressed() {
    idleRounds_ = 0;
    leftOnce_ = 0;
  }
  // Called after a round that moved nothing; `peers` is a mask of the ranks waited on. Fails on a
  // dead, departed or aborted peer, on CommAbort, or when nothing moved for the timeout.
  Status idle(std::uint64_t peers);

 private:
  Comm& comm_;
  std::uint32_t idleRounds_ = 0;
  std::uint64_t leftOnce_ = 0;  // peers seen gone once: one more round before failing
  std::chrono::steady_clock::time_point idleSince_{};
  std::chrono::steady_clock::time_point lastCheck_{};
};

}  // namespace cxlccl
