#pragma once
// The memory behind a pool, mapped as one contiguous range: a device-DAX or a file, or several
// of them striped ("/dev/dax0.0,/dev/dax1.0"). Striped, the range is cut into stripes that
// alternate between the devices: stripe i lives on device i % N at offset (i / N) x stripeBytes,
// so the rings of different ranks, and the chunks of one large message, are spread over all the
// devices' bandwidth. The layout follows from the devices' sizes alone: every host that maps the
// same devices in the same order sees the same pool.

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "Status.h"

namespace cxlccl {

// How a pool is opened: tools that only look at a pool (cxlccl-pool info) neither create it nor
// ask for write access.
struct PoolOpenMode {
  bool create = true;
  bool writable = true;
};

// Who may use a pool file the library creates: its owner only (mode 0600), or also the group
// $CXLCCL_POOL_GROUP names, by name or number (0660). Never every user.
struct PoolPermissions {
  unsigned mode = 0600;
  gid_t group = static_cast<gid_t>(-1);  // -1: the creator's
};
Status poolPermissions(PoolPermissions* out);

class PoolMapping {
 public:
  // Opens every path of `spec` (comma-separated, up to kMaxStripeDevices). A path that does not
  // exist, or an empty file, becomes a file of createBytes / N -- readable and writable by its
  // owner only, or also by the group $CXLCCL_POOL_GROUP names -- and `created` says the first
  // device was such a file, so the caller formats it. Returns holding the lock (unlock() when
  // done).
  static Status open(const std::string& spec, std::uint64_t createBytes, std::unique_ptr<PoolMapping>* out, bool* created,
                     PoolOpenMode mode = {});
  // The same from descriptors already open, one per path of `spec`, in order (handed over by
  // mtmd, which owns the devices): nothing is created, no lock is taken. Takes the descriptors.
  static Status adopt(const std::string& spec, const std::vector<int>& fds, std::unique_ptr<PoolMapping>* out);
  ~PoolMapping();
  PoolMapping(const PoolMapping&) = delete;
  PoolMapping& operator=(const PoolMapping&) = delete;

  const std::string& spec() const { return spec_; }
  std::byte* base() const { return base_; }
  std::uint64_t bytes() const { return bytes_; }
  int devices() const { return static_cast<int>(devices_.size()); }
  int deviceFd(int device) const { return devices_[static_cast<std::size_t>(device)].fd; }
  const std::string& devicePath(int device) const { return devices_[static_cast<std::size_t>(device)].path; }
  std::uint64_t stripeBytes() const { return stripeBytes_; }
  // The device holding pool byte `offset`, and the offset there.
  int deviceOf(std::uint64_t offset) const;
  std::uint64_t deviceOffset(std::uint64_t offset) const;

  // Makes [at, at + bytes) of the mapping ready for use ahead of it, so that the calls that
  // first touch each page do not pay for it: faults the pages in for writing
  // (MADV_POPULATE_WRITE, Linux 5.14; a kernel or device that refuses leaves them to fault on
  // use, logged at INFO), then reads a word of each, because under nested virtualisation the
  // first access to a page after it is mapped still costs a hypervisor exit. On the development
  // VM the first lap of a 2 MiB ring in 2 KiB chunks took 14-20 us a call against 1.1 after it;
  // with this, 1.1-1.3 from the first call. Writes no data.
  void prefault(std::byte* at, std::size_t bytes) const;

  // Writers of the pool's table hold this (an flock on the first device).
  Status lock() const;
  void unlock() const;

 private:
  PoolMapping() = default;
  Status openDevice(const std::string& path, PoolOpenMode mode);
  Status addDevice(const std::string& path, int fd);
  Status map();

  struct Device {
    std::string path;
    int fd = -1;
    std::uint64_t bytes = 0;
  };
  std::string spec_;
  std::vector<Device> devices_;
  std::byte* base_ = nullptr;
  std::uint64_t bytes_ = 0;
  std::uint64_t stripeBytes_ = 0;
  bool writable_ = true;
};

inline constexpr int kMaxStripeDevices = 16;

}  // namespace cxlccl
