#include <numaif.h>
#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include "mtm/migrate/Syscalls.h"

namespace mtm::migrate {

long KernelSyscalls::movePages(int pid, unsigned long count, void** pages, const int* nodes, int* status, int flags) {
  long r = ::move_pages(pid, count, pages, nodes, status, flags);
  return r < 0 ? -errno : r;
}

int KernelSyscalls::pidfdOpen(int pid) {
  long fd = ::syscall(SYS_pidfd_open, pid, 0);
  return fd < 0 ? -errno : static_cast<int>(fd);
}

bool KernelSyscalls::exited(int pidfd) {
  // A pidfd polls readable once its process has exited (pidfd_open(2)).
  pollfd p{pidfd, POLLIN, 0};
  return ::poll(&p, 1, 0) > 0;
}

void KernelSyscalls::closeFd(int fd) {
  if (fd >= 0) ::close(fd);
}

long KernelSyscalls::processMadvise(int pidfd, const std::vector<iovec>& ranges, int advice) {
  long r = ::syscall(SYS_process_madvise, pidfd, ranges.data(), ranges.size(), advice, 0);
  return r < 0 ? -errno : r;
}

}  // namespace mtm::migrate
