#include "mtm/KernelFs.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <sstream>

#include "mtm/UniqueFd.h"

namespace mtm {

std::filesystem::path KernelFs::resolve(std::string_view path) const {
  while (!path.empty() && path.front() == '/') path.remove_prefix(1);
  return root_ / path;
}

Result<std::string> KernelFs::read(std::string_view path) const {
  // sysfs and procfs files report a size of 0 or 4096: read until EOF, never trust st_size.
  const auto full = resolve(path);
  UniqueFd fd(::open(full.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return Error::fromErrno("read " + full.string(), errno);
  std::string text;
  char buf[8192];
  for (;;) {
    ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Error::fromErrno("read " + full.string(), errno);
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  return text;
}

uint64_t processCpuNs(const KernelFs& fs, int pid) {
  auto stat = fs.read("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return 0;
  // Fields after the ")" of comm (which may hold spaces): state is field 3; utime and stime
  // are fields 14 and 15, in clock ticks.
  std::istringstream in(stat->substr(stat->rfind(')') + 2));
  std::string field;
  uint64_t ticks = 0;
  for (int f = 3; f <= 15 && in >> field; ++f)
    if (f >= 14) ticks += std::stoull(field);
  return ticks * (1000000000ull / static_cast<uint64_t>(::sysconf(_SC_CLK_TCK)));
}

Status KernelFs::write(std::string_view path, std::string_view value) const {
  const auto full = resolve(path);
  UniqueFd fd(::open(full.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC));  // sysfs ignores O_TRUNC; a tree in a test does not
  if (!fd) return Error::fromErrno("write \"" + std::string(value) + "\" to " + full.string(), errno);
  ssize_t n;
  do n = ::write(fd.get(), value.data(), value.size());
  while (n < 0 && errno == EINTR);
  if (n != static_cast<ssize_t>(value.size()))
    return Error::fromErrno("write \"" + std::string(value) + "\" to " + full.string(), n < 0 ? errno : EIO);
  return {};
}

Result<std::vector<std::string>> KernelFs::list(std::string_view dir) const {
  const auto full = resolve(dir);
  std::error_code ec;
  std::filesystem::directory_iterator it(full, ec);
  if (ec) return Error::fromErrno("list " + full.string(), ec.value());
  std::vector<std::string> names;
  for (const auto& entry : it) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

bool KernelFs::exists(std::string_view path) const {
  std::error_code ec;
  return std::filesystem::exists(resolve(path), ec);
}

}  // namespace mtm
