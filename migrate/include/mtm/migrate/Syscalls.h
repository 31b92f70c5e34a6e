#pragma once
// The kernel calls that change or query page placement, behind one interface so that tests can
// record what would have happened. Returns follow the kernel: a negative errno on failure.

#include <sys/uio.h>

#include <cstdint>
#include <vector>

namespace mtm::migrate {

class MemorySyscalls {
 public:
  virtual ~MemorySyscalls() = default;

  // move_pages(2). nodes == nullptr queries: status[i] becomes the page's node or -errno.
  // Returns 0, the number of pages not migrated for a temporary reason (> 0), or -errno for
  // the whole call; entries the kernel did not reach keep the value they had.
  virtual long movePages(int pid, unsigned long count, void** pages, const int* nodes, int* status, int flags) = 0;

  // pidfd_open(2): a descriptor that stays bound to this process, or -errno.
  virtual int pidfdOpen(int pid) = 0;
  // Whether the process behind a pidfd has exited.
  virtual bool exited(int pidfd) = 0;
  virtual void closeFd(int fd) = 0;

  // process_madvise(2): bytes advised, or -errno.
  virtual long processMadvise(int pidfd, const std::vector<iovec>& ranges, int advice) = 0;
};

// The real kernel.
class KernelSyscalls final : public MemorySyscalls {
 public:
  long movePages(int pid, unsigned long count, void** pages, const int* nodes, int* status, int flags) override;
  int pidfdOpen(int pid) override;
  bool exited(int pidfd) override;
  void closeFd(int fd) override;
  long processMadvise(int pidfd, const std::vector<iovec>& ranges, int advice) override;
};

}  // namespace mtm::migrate
