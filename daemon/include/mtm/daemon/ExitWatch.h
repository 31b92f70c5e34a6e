#pragma once
// Notice a managed process's exit when it happens, not at the next interval: its pidfd (the one
// mtmd holds per process, mtm/Pidfd.h) polls readable once the process has exited. A pidfd names
// the process itself, so a reused pid is never mistaken for it. Without pidfds (an older kernel,
// a seccomp filter) nothing is watched and exits are noticed by the profiler's interval instead.

#include <poll.h>
#include <sys/types.h>

#include <map>
#include <vector>

#include "mtm/Pidfd.h"

namespace mtm::daemon {

class ExitWatch {
 public:
  // Watches `pid` through its pidfd (null: not watched).
  void watch(pid_t pid, SharedPidfd pidfd);
  void forget(pid_t pid);
  bool watching(pid_t pid) const { return fds_.count(pid) > 0; }
  // The pidfd a watched process is watched through; null for others.
  SharedPidfd pidfdOf(pid_t pid) const;

  // For poll(2): one POLLIN entry per watched process.
  std::vector<pollfd> pollFds() const;
  // The pids whose entries in `ready` (from pollFds) report an exit; they are no longer watched.
  std::vector<pid_t> exited(const std::vector<pollfd>& ready);

 private:
  std::map<pid_t, SharedPidfd> fds_;
};

}  // namespace mtm::daemon
