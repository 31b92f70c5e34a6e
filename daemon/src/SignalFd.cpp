#include "mtm/daemon/SignalFd.h"

#include <poll.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>

namespace mtm::daemon {

Result<SignalFd> SignalFd::open(const std::vector<int>& signals) {
  sigset_t set;
  sigemptyset(&set);
  for (int s : signals) sigaddset(&set, s);
  if (int err = pthread_sigmask(SIG_BLOCK, &set, nullptr); err != 0) return Error::fromErrno("block signals", err);
  int fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
  if (fd < 0) return Error::fromErrno("signalfd", errno);
  return SignalFd(fd);
}

Result<int> SignalFd::wait(int timeoutMs, pid_t* sender) {
  pollfd p{fd_.get(), POLLIN, 0};
  int n = ::poll(&p, 1, timeoutMs);
  if (n < 0 && errno == EINTR) return 0;
  if (n < 0) return Error::fromErrno("poll signalfd", errno);
  if (n == 0) return 0;
  signalfd_siginfo info;
  ssize_t r = ::read(fd_.get(), &info, sizeof info);
  if (r < 0 && errno == EAGAIN) return 0;
  if (r != static_cast<ssize_t>(sizeof info)) return Error::fromErrno("read signalfd", errno);
  if (sender) *sender = static_cast<pid_t>(info.ssi_pid);
  return static_cast<int>(info.ssi_signo);
}

}  // namespace mtm::daemon
