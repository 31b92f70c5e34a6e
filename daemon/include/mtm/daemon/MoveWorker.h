#pragma once
// Runs page moves on a thread of its own, so that mtmd's event loop keeps answering its socket
// and feeding systemd's watchdog while pages move (a 512 MiB interval at 512 MiB/s is a
// second). One job at a time: the caller starts one when the worker is idle, and learns it
// finished when fd() turns readable (or by wait()). Moves of a process can be cancelled while
// they run (it was detached or exited, mtmd is stopping): the mover asks cancelled(pid) before
// each batch.

#include <sys/types.h>

#include <condition_variable>
#include <functional>
#include <mutex>
#include <set>
#include <thread>

#include "mtm/UniqueFd.h"

namespace mtm::daemon {

class MoveWorker {
 public:
  MoveWorker();
  ~MoveWorker();  // cancels what runs and waits for it
  MoveWorker(const MoveWorker&) = delete;
  MoveWorker& operator=(const MoveWorker&) = delete;

  // Runs `job` on the worker thread. The worker must be idle (!busy()); cancellations of the
  // previous job are forgotten.
  void start(std::function<void()> job);
  // True from start() until the caller has taken the result with collect().
  bool busy() const;
  // Readable (POLLIN) once the job has finished.
  int fd() const { return done_.get(); }
  // True once when the job has finished (the caller then reads what it wrote): reads fd().
  bool collect();
  // Blocks until the job has finished, then collects it. False when none was running.
  bool wait();

  void cancel(pid_t pid);
  void cancelAll();
  // Whether the running job should stop moving `pid`'s pages (false while idle).
  bool cancelled(pid_t pid) const;

 private:
  void run();

  UniqueFd done_;  // an eventfd
  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::function<void()> job_;  // set: waiting for the thread
  bool busy_ = false;
  bool stop_ = false;
  bool all_ = false;  // cancelAll() since the job started
  std::set<pid_t> cancelled_;
  std::thread thread_;  // last: it starts once the rest is ready
};

}  // namespace mtm::daemon
