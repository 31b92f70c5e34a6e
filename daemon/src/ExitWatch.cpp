#include "mtm/daemon/ExitWatch.h"

namespace mtm::daemon {

void ExitWatch::watch(pid_t pid, SharedPidfd pidfd) {
  if (pidfd) fds_[pid] = std::move(pidfd);
}

void ExitWatch::forget(pid_t pid) { fds_.erase(pid); }

SharedPidfd ExitWatch::pidfdOf(pid_t pid) const {
  auto it = fds_.find(pid);
  return it == fds_.end() ? nullptr : it->second;
}

std::vector<pollfd> ExitWatch::pollFds() const {
  std::vector<pollfd> fds;
  fds.reserve(fds_.size());
  for (const auto& [pid, fd] : fds_) fds.push_back({fd->get(), POLLIN, 0});
  return fds;
}

std::vector<pid_t> ExitWatch::exited(const std::vector<pollfd>& ready) {
  std::vector<pid_t> gone;
  for (const auto& p : ready) {
    if (p.revents == 0) continue;
    for (const auto& [pid, fd] : fds_)
      if (fd->get() == p.fd) {
        gone.push_back(pid);
        break;
      }
  }
  for (pid_t pid : gone) forget(pid);
  return gone;
}

}  // namespace mtm::daemon
