#pragma once
// The one door to kernel files (/sys, /proc). Its root can point at a fixture tree captured
// from another machine, so every parser and discovery rule is testable off that machine.

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "mtm/Result.h"

namespace mtm {

class KernelFs {
 public:
  explicit KernelFs(std::filesystem::path root = "/") : root_(std::move(root)) {}

  // `path` is absolute as on a live machine ("/sys/devices/system/node/online").
  Result<std::string> read(std::string_view path) const;
  // Writes `value` to an existing file (a sysfs attribute) in one write(2).
  Status write(std::string_view path, std::string_view value) const;
  // Names in a directory, sorted; an error when it cannot be listed.
  Result<std::vector<std::string>> list(std::string_view dir) const;
  bool exists(std::string_view path) const;

  const std::filesystem::path& root() const { return root_; }
  bool live() const { return root_ == "/"; }

 private:
  std::filesystem::path resolve(std::string_view path) const;
  std::filesystem::path root_;
};

// A process's CPU time, utime + stime from /proc/PID/stat, in nanoseconds; 0 when it is gone.
uint64_t processCpuNs(const KernelFs& fs, int pid);

}  // namespace mtm
