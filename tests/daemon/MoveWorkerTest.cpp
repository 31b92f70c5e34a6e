// The move worker: jobs on a thread of their own, their end seen through a descriptor, and
// cancellation per process, of all, and by the worker's end.
#include <catch2/catch.hpp>

#include <poll.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "mtm/daemon/MoveWorker.h"

using mtm::daemon::MoveWorker;

namespace {

bool readable(int fd, int timeoutMs) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, timeoutMs) == 1;
}

}  // namespace

TEST_CASE("the move worker runs a job off the caller's thread and says when it is done", "[daemon]") {
  MoveWorker w;
  CHECK_FALSE(w.busy());
  CHECK_FALSE(w.wait());  // nothing to wait for
  std::atomic<bool> release{false};
  std::thread::id ranOn;
  w.start([&] {
    ranOn = std::this_thread::get_id();
    while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  CHECK(w.busy());
  CHECK_FALSE(readable(w.fd(), 50));  // still running: the caller's loop goes on
  CHECK_FALSE(w.collect());
  release = true;
  CHECK(readable(w.fd(), 5000));
  CHECK(w.collect());
  CHECK_FALSE(w.busy());
  CHECK(ranOn != std::this_thread::get_id());
  CHECK_FALSE(w.collect());  // once
}

TEST_CASE("a job sees its process cancelled, or all of them -- the next job starts with none cancelled", "[daemon]") {
  MoveWorker w;
  CHECK_FALSE(w.cancelled(7));
  w.cancel(7);  // idle: nothing to cancel, nothing remembered
  std::atomic<int> seen{0};
  w.start([&] {
    while (!w.cancelled(7)) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    seen = w.cancelled(8) ? 2 : 1;
  });
  w.cancel(7);
  CHECK(w.wait());
  CHECK(seen == 1);  // 7 only
  std::atomic<bool> looked{false};
  w.start([&] {
    seen = w.cancelled(7) ? 3 : 0;
    looked = true;
    while (!w.cancelled(9)) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  while (!looked) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  w.cancelAll();
  CHECK(w.wait());
  CHECK(seen == 0);
  CHECK_FALSE(w.cancelled(9));  // idle again
}

TEST_CASE("a worker that goes away cancels its running job and waits for it", "[daemon]") {
  std::atomic<bool> ended{false};
  {
    MoveWorker w;
    w.start([&] {
      while (!w.cancelled(1)) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      ended = true;
    });
  }
  CHECK(ended);
}
