#pragma once
// Who a process is, from /proc: its name and its user ids; and which processes the config's
// targets section names.

#include <sys/types.h>

#include <string>
#include <utility>
#include <vector>

#include "mtm/KernelFs.h"
#include "mtm/Result.h"
#include "mtm/config/Config.h"

namespace mtm::daemon {

struct ProcessIdentity {
  int pid = 0;
  int tgid = 0;               // the thread group (process) this id belongs to
  bool kernelThread = false;  // no user memory at all
  std::string comm;
  uid_t realUid = 0, effectiveUid = 0, savedUid = 0;
  // Whether `uid` may steer this process's memory: root, or the owner of all three ids (the
  // rule ptrace applies, so a setuid program is not another user's to move).
  bool ownedBy(uid_t uid) const { return uid == 0 || (realUid == uid && effectiveUid == uid && savedUid == uid); }
};

// Errors: "pid 42 does not exist" (ESRCH) or the /proc read failure.
Result<ProcessIdentity> readProcessIdentity(const KernelFs& fs, int pid);

// The process's cgroup v2 path ("/system.slice/foo.service"); "" when /proc says none (cgroup v1
// only) or the process is gone.
std::string readCgroup(const KernelFs& fs, int pid);

// Whether mtm can manage this id: a process (thread group leader) with user memory. Kernel
// threads and the ids of a process's other threads (which /proc also answers for) are
// refused with what to do instead (EINVAL).
Status checkManageable(const ProcessIdentity& id);

// The processes the config's targets section matches now, each with why: "config pid",
// "cgroup PATH", "command NAME". Unreadable cgroups are logged (rate-limited) and skipped.
std::vector<std::pair<int, std::string>> matchConfigTargets(const config::TargetsConfig& targets, const KernelFs& fs);

}  // namespace mtm::daemon
