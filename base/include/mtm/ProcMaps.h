#pragma once
// /proc/PID/maps and smaps, parsed by pure functions.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "mtm/KernelFs.h"
#include "mtm/Result.h"

namespace mtm {

struct Vma {
  uint64_t start = 0;
  uint64_t end = 0;
  std::string perms;  // "rw-p"
  uint64_t offset = 0;
  std::string path;                // "", "[heap]", "/usr/lib/...", "/dev/hugepages/x (deleted)"
  uint64_t kernelPageSize = 4096;  // smaps KernelPageSize: > 4096 for hugetlb mappings
  uint64_t anonHugeBytes = 0;      // smaps AnonHugePages
  uint64_t rssBytes = 0;           // smaps Rss

  bool hugetlb() const { return kernelPageSize > 4096; }
};

// "7f00-7f10 rw-p 00000000 00:00 0   [heap]" lines.
Result<std::vector<Vma>> parseMaps(std::string_view text);
// The same, plus each VMA's KernelPageSize, AnonHugePages and Rss.
Result<std::vector<Vma>> parseSmaps(std::string_view text);

// A failed read of a process's /proc file (or move_pages query), said for people: "pid 42:
// read /proc/42/smaps: No such file or directory: no such process"; refused, a user is told to
// run as root or as the owner, root what else it may lack (CAP_SYS_PTRACE, Yama, an LSM).
Error processFileError(int pid, const Error& readError);

// /proc/PID/smaps, read and parsed; errors as processFileError says them.
Result<std::vector<Vma>> readProcessVmas(const KernelFs& fs, int pid);

// "0x7f00-0x7f10" or "7f00-7f10" -> [start, end).
Result<std::pair<uint64_t, uint64_t>> parseAddressRange(std::string_view text);

}  // namespace mtm
