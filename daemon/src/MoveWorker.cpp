#include "mtm/daemon/MoveWorker.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cstdint>

#include "mtm/Check.h"

namespace mtm::daemon {

MoveWorker::MoveWorker() : done_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)), thread_([this] { run(); }) { MTM_CHECK(done_); }

MoveWorker::~MoveWorker() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
    all_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void MoveWorker::start(std::function<void()> job) {
  {
    std::lock_guard lock(mu_);
    MTM_CHECK(!busy_);
    busy_ = true;
    all_ = false;
    cancelled_.clear();
    job_ = std::move(job);
  }
  wake_.notify_all();
}

bool MoveWorker::busy() const {
  std::lock_guard lock(mu_);
  return busy_;
}

bool MoveWorker::collect() {
  uint64_t n = 0;
  if (::read(done_.get(), &n, sizeof n) != static_cast<ssize_t>(sizeof n)) return false;
  std::lock_guard lock(mu_);
  busy_ = false;
  return true;
}

bool MoveWorker::wait() {
  if (!busy()) return false;
  pollfd p{done_.get(), POLLIN, 0};
  while (!collect()) ::poll(&p, 1, -1);
  return true;
}

void MoveWorker::cancel(pid_t pid) {
  std::lock_guard lock(mu_);
  if (busy_) cancelled_.insert(pid);
}

void MoveWorker::cancelAll() {
  std::lock_guard lock(mu_);
  if (busy_) all_ = true;
}

bool MoveWorker::cancelled(pid_t pid) const {
  std::lock_guard lock(mu_);
  return busy_ && (all_ || cancelled_.count(pid) > 0);
}

void MoveWorker::run() {
  for (;;) {
    std::function<void()> job;
    {
      std::unique_lock lock(mu_);
      wake_.wait(lock, [this] { return stop_ || job_; });
      if (!job_) return;  // stopping, nothing left to run
      job = std::move(job_);
      job_ = nullptr;
    }
    job();
    const uint64_t one = 1;
    (void)!::write(done_.get(), &one, sizeof one);
  }
}

}  // namespace mtm::daemon
