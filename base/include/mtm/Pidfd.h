#pragma once
// A process's pidfd (pidfd_open(2), Linux 5.3), shared by everything that acts on that process:
// mtmd watches its exit, the profiler clears its accessed bits and the mover splits its THPs
// through one descriptor, held as long as any of them still needs it. A pidfd names the process
// itself, so a reused pid never reaches it.

#include <memory>

#include "mtm/Result.h"
#include "mtm/UniqueFd.h"

namespace mtm {

using SharedPidfd = std::shared_ptr<const UniqueFd>;

// The error names the pid and errno (ESRCH: gone; ENOSYS: a kernel before 5.3).
Result<SharedPidfd> openPidfd(int pid);

}  // namespace mtm
