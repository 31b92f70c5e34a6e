#include "PoolMapping.h"

#include <fcntl.h>
#include <grp.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <vector>

namespace cxlccl {
namespace {

constexpr std::uint64_t kAlign = 2u << 20;  // device-DAX mappings are 2 MiB-aligned
// Each stripe is one mapping: at most this many keeps far below vm.max_map_count (65530).
constexpr std::uint64_t kMaxStripes = 16384;

// A device-DAX's size is in sysfs: /sys/dev/char/MAJ:MIN/size.
Status daxSize(const std::string& path, const struct stat& st, std::uint64_t* bytes) {
  std::string sysfs = cat("/sys/dev/char/", major(st.st_rdev), ":", minor(st.st_rdev), "/size");
  std::ifstream in(sysfs);
  if (!(in >> *bytes))
    return Status::error(cxlcclSystemError, "pool ", path, ": a character device whose size ", sysfs,
                         " cannot be read; is it a device-DAX (/dev/daxX.Y)?");
  return Status::success();
}

std::vector<std::string> splitSpec(const std::string& spec) {
  std::vector<std::string> paths;
  std::size_t at = 0;
  for (;;) {
    std::size_t comma = spec.find(',', at);
    paths.push_back(spec.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
    if (comma == std::string::npos) return paths;
    at = comma + 1;
  }
}

Status checkSpec(const std::string& spec, std::vector<std::string>* paths) {
  *paths = splitSpec(spec);
  std::vector<std::string> sorted = *paths;
  std::sort(sorted.begin(), sorted.end());
  bool emptyPath = std::find(paths->begin(), paths->end(), "") != paths->end();
  if (emptyPath || paths->size() > kMaxStripeDevices || std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
    return Status::error(cxlcclInvalidArgument, "pool \"", spec, "\": expected a path, or up to ", kMaxStripeDevices,
                         " different paths separated by commas to stripe over");
  return Status::success();
}

}  // namespace

Status poolPermissions(PoolPermissions* out) {
  *out = PoolPermissions{};
  const char* group = std::getenv("CXLCCL_POOL_GROUP");
  if (group == nullptr || *group == '\0') return Status::success();
  char* end = nullptr;
  errno = 0;
  const unsigned long gid = std::strtoul(group, &end, 10);
  if (*end == '\0' && errno == 0 && gid < static_cast<unsigned long>(static_cast<gid_t>(-1))) {
    out->group = static_cast<gid_t>(gid);
  } else {
    std::vector<char> buffer(16384);
    struct group entry {};
    struct group* found = nullptr;
    if (getgrnam_r(group, &entry, buffer.data(), buffer.size(), &found) != 0 || found == nullptr)
      return Status::error(cxlcclInvalidArgument, "CXLCCL_POOL_GROUP=", group,
                           ": no such group (a group name or number that the ranks' users share)");
    out->group = found->gr_gid;
  }
  out->mode = 0660;
  return Status::success();
}

Status PoolMapping::open(const std::string& spec, std::uint64_t createBytes, std::unique_ptr<PoolMapping>* out, bool* created,
                         PoolOpenMode mode) {
  std::unique_ptr<PoolMapping> mapping(new PoolMapping());
  mapping->spec_ = spec;
  mapping->writable_ = mode.writable;
  std::vector<std::string> paths;
  CXLCCL_TRY(checkSpec(spec, &paths));
  std::uint64_t perDevice = (createBytes / paths.size() + kAlign - 1) / kAlign * kAlign;
  *created = false;
  for (const std::string& path : paths) CXLCCL_TRY(mapping->openDevice(path, mode));
  // Held from here: files are sized under the lock, and whoever finds the pool empty formats it.
  CXLCCL_TRY(mapping->lock());
  for (Device& d : mapping->devices_) {
    struct stat st;
    if (d.bytes == 0 && fstat(d.fd, &st) == 0) d.bytes = static_cast<std::uint64_t>(st.st_size);
    if (d.bytes != 0) continue;  // sized by another process before this one took the lock
    if (!mode.create)
      return Status::error(cxlcclInvalidUsage, "pool ", d.path,
                           " is empty (nothing was changed: format it "
                           "with cxlccl-pool format ",
                           spec, ")");
    if (ftruncate(d.fd, static_cast<off_t>(perDevice)) != 0)
      return Status::system(cat("size pool ", d.path, " to ", perDevice, " bytes"), errno);
    d.bytes = perDevice;
    if (&d == &mapping->devices_.front()) *created = true;
  }
  CXLCCL_TRY(mapping->map());
  *out = std::move(mapping);
  return Status::success();
}

Status PoolMapping::adopt(const std::string& spec, const std::vector<int>& fds, std::unique_ptr<PoolMapping>* out) {
  std::unique_ptr<PoolMapping> mapping(new PoolMapping());
  mapping->spec_ = spec;
  std::vector<std::string> paths;
  Status status = checkSpec(spec, &paths);
  if (status.ok() && paths.size() != fds.size())
    status = Status::error(cxlcclInternalError, "pool ", spec, ": ", fds.size(), " descriptors for ", paths.size(), " devices");
  for (std::size_t i = 0; i < fds.size(); ++i) {
    if (!status.ok()) {
      ::close(fds[i]);
      continue;
    }
    status = mapping->addDevice(paths[i], fds[i]);
    if (status.ok() && mapping->devices_.back().bytes == 0) status = Status::error(cxlcclInvalidUsage, "pool ", paths[i], " is empty");
  }
  CXLCCL_TRY(status);
  CXLCCL_TRY(mapping->map());
  *out = std::move(mapping);
  return Status::success();
}

Status PoolMapping::openDevice(const std::string& path, PoolOpenMode mode) {
  const int access = mode.writable ? O_RDWR : O_RDONLY;
  int fd = ::open(path.c_str(), access | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT && !mode.create)
    return Status::error(cxlcclInvalidUsage, "pool ", path, " does not exist (nothing was created)");
  if (fd < 0 && errno == ENOENT) {
    PoolPermissions perms;
    CXLCCL_TRY(poolPermissions(&perms));
    fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, perms.mode);
    if (fd >= 0) {
      // Exactly these bits whatever the umask, and the group when one shares the pool.
      if (fchmod(fd, perms.mode) != 0 || (perms.group != static_cast<gid_t>(-1) && fchown(fd, static_cast<uid_t>(-1), perms.group) != 0)) {
        const int err = errno;
        ::close(fd);
        ::unlink(path.c_str());
        return Status::system(cat("give new pool ", path, " mode ", std::oct, perms.mode, std::dec,
                                  perms.group != static_cast<gid_t>(-1) ? cat(" and group ", perms.group) : std::string(),
                                  " (CXLCCL_POOL_GROUP must name a group this user belongs to)"),
                              err);
      }
    }
    if (fd < 0 && errno == EEXIST) fd = ::open(path.c_str(), access | O_CLOEXEC);
  }
  if (fd < 0 && errno == EACCES) {
    struct stat st;
    if (::stat(path.c_str(), &st) == 0)
      return Status::error(cxlcclSystemError, "open pool ", path, ": permission denied (it belongs to uid ", st.st_uid, ", gid ", st.st_gid,
                           ", mode ", std::oct, st.st_mode & 0777, std::dec, "): use a pool of your own (CXLCCL_POOL=/dev/shm/cxlccl-",
                           getuid(), ".pool), or have its owner share it with a group (CXLCCL_POOL_GROUP when it is made)");
  }
  if (fd < 0)
    return Status::system(cat("open pool ", path,
                              " (set CXLCCL_POOL to a device-DAX or a file "
                              "on /dev/shm or hugetlbfs, or several separated by commas)"),
                          errno);
  return addDevice(path, fd);
}

// Takes `fd`; the device's size: a device-DAX's from sysfs, a file's (0: empty) from fstat.
Status PoolMapping::addDevice(const std::string& path, int fd) {
  devices_.push_back(Device{path, fd, 0});
  struct stat st;
  if (fstat(fd, &st) != 0) return Status::system(cat("stat pool ", path), errno);
  if (S_ISCHR(st.st_mode)) return daxSize(path, st, &devices_.back().bytes);
  devices_.back().bytes = static_cast<std::uint64_t>(st.st_size);
  return Status::success();
}

Status PoolMapping::map() {
  std::uint64_t smallest = devices_.front().bytes;
  for (const Device& d : devices_) smallest = std::min(smallest, d.bytes);
  smallest = smallest / kAlign * kAlign;
  if (smallest == 0) return Status::error(cxlcclInvalidUsage, "pool ", spec_, " has a device smaller than 2 MiB");
  const std::uint64_t n = devices_.size();
  const int prot = writable_ ? PROT_READ | PROT_WRITE : PROT_READ;
  if (n == 1) {
    void* base = mmap(nullptr, smallest, prot, MAP_SHARED, devices_[0].fd, 0);
    if (base == MAP_FAILED) return Status::system(cat("mmap pool ", spec_, " (", smallest, " bytes)"), errno);
    base_ = static_cast<std::byte*>(base);
    bytes_ = stripeBytes_ = smallest;
    return Status::success();
  }
  stripeBytes_ = kAlign;
  while (n * (smallest / stripeBytes_) > kMaxStripes) stripeBytes_ *= 2;
  const std::uint64_t stripesPerDevice = smallest / stripeBytes_;
  const std::uint64_t total = n * stripesPerDevice * stripeBytes_;
  // Reserve an aligned range, then map each stripe over it from its device.
  void* reserved = mmap(nullptr, total + kAlign, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (reserved == MAP_FAILED) return Status::system(cat("reserve ", total, " bytes for pool ", spec_), errno);
  auto start = reinterpret_cast<std::uintptr_t>(reserved);
  std::uintptr_t aligned = (start + kAlign - 1) / kAlign * kAlign;
  if (aligned > start) munmap(reserved, aligned - start);
  munmap(reinterpret_cast<void*>(aligned + total), start + kAlign - aligned);
  base_ = reinterpret_cast<std::byte*>(aligned);
  bytes_ = total;
  for (std::uint64_t i = 0; i < n * stripesPerDevice; ++i) {
    void* at = mmap(base_ + i * stripeBytes_, stripeBytes_, prot, MAP_SHARED | MAP_FIXED, devices_[i % n].fd,
                    static_cast<off_t>(i / n * stripeBytes_));
    if (at == MAP_FAILED) return Status::system(cat("mmap stripe ", i, " of pool ", spec_, " from ", devices_[i % n].path), errno);
  }
  return Status::success();
}

PoolMapping::~PoolMapping() {
  if (base_ != nullptr) munmap(base_, bytes_);
  for (const Device& d : devices_) ::close(d.fd);
}

int PoolMapping::deviceOf(std::uint64_t offset) const { return static_cast<int>(offset / stripeBytes_ % devices_.size()); }

std::uint64_t PoolMapping::deviceOffset(std::uint64_t offset) const {
  return offset / stripeBytes_ / devices_.size() * stripeBytes_ + offset % stripeBytes_;
}

void PoolMapping::prefault(std::byte* at, std::size_t bytes) const {
#ifndef MADV_POPULATE_WRITE
  constexpr int MADV_POPULATE_WRITE = 23;  // Linux 5.14; older headers lack it
#endif
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  std::byte* first = at - reinterpret_cast<std::uintptr_t>(at) % page;
  const std::size_t span = static_cast<std::size_t>(at + bytes - first);
  if (madvise(first, span, MADV_POPULATE_WRITE) != 0)
    info("pool ", spec_, ": pages not faulted in ahead of use (madvise MADV_POPULATE_WRITE: ", std::strerror(errno), ")");
  std::uint64_t sum = 0;
  for (std::size_t offset = 0; offset < span; offset += page) sum += *reinterpret_cast<const volatile std::uint64_t*>(first + offset);
  asm volatile("" : : "r"(sum));
}

Status PoolMapping::lock() const {
  while (flock(devices_.front().fd, LOCK_EX) != 0) {
    if (errno != EINTR) return Status::system(cat("lock pool ", spec_), errno);
  }
  return Status::success();
}

void PoolMapping::unlock() const { flock(devices_.front().fd, LOCK_UN); }

}  // namespace cxlccl
