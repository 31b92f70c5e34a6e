#include "mtm/daemon/ExitWatch.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace mtm::daemon {

namespace {

size_t maxWatched() {
  rlimit lim{};
  if (::getrlimit(RLIMIT_NOFILE, &lim) != 0 || lim.rlim_cur == RLIM_INFINITY) return 256;
  return static_cast<size_t>(lim.rlim_cur / 4);
}

}  // namespace

bool ExitWatch::watch(pid_t pid) {
  if (fds_.count(pid)) return true;
  if (fds_.size() >= maxWatched()) return false;
  // glibc 2.36 declares pidfd_open in <sys/pidfd.h>; the syscall keeps older headers working.
  UniqueFd fd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  if (!fd) return false;
  fds_.emplace(pid, std::move(fd));
  return true;
}

void ExitWatch::forget(pid_t pid) { fds_.erase(pid); }

std::vector<pollfd> ExitWatch::pollFds() const {
  std::vector<pollfd> fds;
  fds.reserve(fds_.size());
  for (const auto& [pid, fd] : fds_) fds.push_back({fd.get(), POLLIN, 0});
  return fds;
}

std::vector<pid_t> ExitWatch::exited(const std::vector<pollfd>& ready) {
  std::vector<pid_t> gone;
  for (const auto& p : ready) {
    if (p.revents == 0) continue;
    for (const auto& [pid, fd] : fds_)
      if (fd.get() == p.fd) {
        gone.push_back(pid);
        break;
      }
  }
  for (pid_t pid : gone) forget(pid);
  return gone;
}

}  // namespace mtm::daemon
