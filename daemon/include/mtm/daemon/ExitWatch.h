#pragma once
// Notice a managed process's exit when it happens, not at the next interval: one pidfd per
// process (pidfd_open(2), Linux 5.3), readable once the process has exited. A pidfd names the
// process itself, so a reused pid is never mistaken for it. Without pidfds (an older kernel, a
// seccomp filter) nothing is watched and exits are noticed by the profiler's interval instead.

#include <poll.h>
#include <sys/types.h>

#include <map>
#include <vector>

#include "mtm/UniqueFd.h"

namespace mtm::daemon {

class ExitWatch {
 public:
  // false when the pid cannot be watched (gone already, no pidfd_open, or a quarter of the
  // process's file-descriptor limit already spent on pidfds, which leaves the rest for clients,
  // perf events and BPF): the caller's periodic check still finds its exit.
  bool watch(pid_t pid);
  void forget(pid_t pid);
  bool watching(pid_t pid) const { return fds_.count(pid) > 0; }

  // For poll(2): one POLLIN entry per watched process.
  std::vector<pollfd> pollFds() const;
  // The pids whose entries in `ready` (from pollFds) report an exit; they are no longer watched.
  std::vector<pid_t> exited(const std::vector<pollfd>& ready);

 private:
  std::map<pid_t, UniqueFd> fds_;
};

}  // namespace mtm::daemon
