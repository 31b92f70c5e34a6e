#include "Wait.h"

#include <immintrin.h>
#include <sched.h>

#include <thread>

#include "Comm.h"

namespace cxlccl {
namespace {

constexpr std::uint32_t kBusyRounds = 32;  // polls without a pause
// ~3 µs of pause where one is 13 ns (a Xeon KVM guest), ~15 µs at Skylake's 140 cycles; 4 rounds
// when oversubscribed. Spinning 2,000 rounds instead did not change 2 ranks' AllGathers of 256
// KiB-1 MiB on that guest (three pairs).
constexpr std::uint32_t kSpinRounds = 256;
constexpr std::uint32_t kYieldRounds = 2048;  // then sched_yield, then sleeps
constexpr auto kPeerCheckPeriod = std::chrono::milliseconds(5);

}  // namespace

void Backoff::sleepLonger(std::chrono::microseconds limit) {
  std::this_thread::sleep_for(next_);
  next_ = std::min(next_ * 2, limit);
}

Waiter::Waiter(Comm& comm) : comm_(comm) {}

Status Waiter::idle(std::uint64_t peers) {
  // Spinning: no clock read (a small message's whole wait is shorter than one), and the first
  // rounds not even a pause (one costs ~140 cycles on Skylake and later).
  const std::uint32_t spinRounds = comm_.oversubscribed() ? 4u : kSpinRounds;
  if (idleRounds_ < spinRounds) {
    if (idleRounds_++ >= kBusyRounds) _mm_pause();
    return Status::success();
  }
  if (idleRounds_++ == spinRounds) idleSince_ = lastCheck_ = Clock::now();  // the timeout counts from here
  if (idleRounds_ < kYieldRounds) {
    sched_yield();
  } else {
    auto sleep = std::chrono::microseconds(std::min<std::uint32_t>((idleRounds_ - kYieldRounds) + 1, 500));
    std::this_thread::sleep_for(sleep);
  }
  Clock::time_point now = Clock::now();
  if (comm_.aborting()) return Status::error(cxlcclRemoteError, "the communicator was aborted (cxlcclCommAbort)");
  if (now - lastCheck_ >= kPeerCheckPeriod || leftOnce_ != 0) {
    lastCheck_ = now;
    for (int r = 0; r < comm_.nranks(); ++r) {
      if ((peers >> r & 1) == 0) continue;
      bool left = false;
      Status status = comm_.checkPeer(r, now, &left);
      if (left && (leftOnce_ >> r & 1) == 0) {
        leftOnce_ |= 1ull << r;  // what it published before leaving may not have been read yet
        continue;
      }
      CXLCCL_TRY(status);
    }
  }
  auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(now - idleSince_);
  if (waited.count() > comm_.options().timeoutMs) {
    std::string on;
    for (int r = 0; r < comm_.nranks(); ++r) {
      if ((peers >> r & 1) != 0) on += (on.empty() ? "" : ", ") + comm_.describeRank(r);
    }
    return Status::error(cxlcclRemoteError, "no progress for ", waited.count(), " ms waiting on ", on.empty() ? "the peers" : on,
                         " (timeout ", comm_.options().timeoutMs,
                         " ms, CXLCCL_TIMEOUT_MS): a peer stalled, or the ranks called different "
                         "collectives");
  }
  return Status::success();
}

}  // namespace cxlccl
