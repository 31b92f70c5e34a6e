#pragma once
// Signals as events: the listed signals are blocked and read from a signalfd in the event
// loop, never handled asynchronously.

#include <sys/types.h>

#include <csignal>
#include <vector>

#include "mtm/Result.h"
#include "mtm/UniqueFd.h"

namespace mtm::daemon {

class SignalFd {
 public:
  static Result<SignalFd> open(const std::vector<int>& signals);
  int fd() const { return fd_.get(); }
  // Waits up to timeoutMs (-1: forever) for a signal; 0 when none came. `sender` gets the pid
  // that sent it (0: the kernel, e.g. the terminal's Ctrl-C).
  Result<int> wait(int timeoutMs, pid_t* sender = nullptr);

 private:
  explicit SignalFd(int fd) : fd_(fd) {}
  UniqueFd fd_;
};

}  // namespace mtm::daemon
