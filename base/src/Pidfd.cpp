#include "mtm/Pidfd.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <string>

namespace mtm {

Result<SharedPidfd> openPidfd(int pid) {
  // glibc 2.36 declares pidfd_open in <sys/pidfd.h>; the syscall keeps older headers working.
  const long fd = ::syscall(SYS_pidfd_open, pid, 0);
  if (fd < 0) return Error::fromErrno("pid " + std::to_string(pid) + ": pidfd_open", errno);
  return std::make_shared<const UniqueFd>(static_cast<int>(fd));
}

}  // namespace mtm
