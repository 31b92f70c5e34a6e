#include "Pool.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "CacheLines.h"

namespace cxlccl {
namespace {

constexpr char kMagic[8] = {'C', 'X', 'L', 'C', 'C', 'L', 'P', 'L'};
constexpr std::uint32_t kMaxRegions = 4096;
constexpr std::size_t kTableOffset = 4096;

struct PoolHeader {
  char magic[8];
  std::uint32_t version;
  std::uint32_t flags;
  std::uint64_t bytes;
  std::uint64_t generation;
  std::uint64_t dataOffset;   // layout: the first allocatable byte
  std::uint32_t maxRegions;   // layout: entries in the region table
  std::uint32_t tableOffset;  // layout: where the table starts
};

struct RegionEntry {
  std::uint64_t nonceHigh;
  std::uint64_t nonceLow;
  std::uint64_t offset;
  std::uint64_t bytes;
  std::uint64_t generation;
  std::uint32_t state;
  std::uint32_t nranks;
  std::uint32_t creatorPid;
  std::uint32_t pad[3];
};
static_assert(sizeof(RegionEntry) == 64);
static_assert(kTableOffset + kMaxRegions * sizeof(RegionEntry) <= kPoolAlign);

bool isDeviceDax(const struct stat& st) { return S_ISCHR(st.st_mode); }

// A device-DAX's size is in sysfs: /sys/dev/char/MAJ:MIN/size.
Status daxSize(const std::string& path, const struct stat& st, std::uint64_t* bytes) {
  std::string sysfs = cat("/sys/dev/char/", major(st.st_rdev), ":", minor(st.st_rdev), "/size");
  std::ifstream in(sysfs);
  if (!(in >> *bytes))
    return Status::error(cxlcclSystemError, "pool ", path, ": a character device whose size ",
                         sysfs, " cannot be read; is it a device-DAX (/dev/daxX.Y)?");
  return Status::success();
}

std::uint64_t timeSeed() {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull + ts.tv_nsec;
}

}  // namespace

static PoolHeader* header(std::byte* base) { return reinterpret_cast<PoolHeader*>(base); }
static RegionEntry* table(std::byte* base) {
  return reinterpret_cast<RegionEntry*>(base + kTableOffset);
}

Status Pool::open(const std::string& path, std::uint64_t createBytes, std::shared_ptr<Pool>* out) {
  std::shared_ptr<Pool> pool(new Pool());
  pool->path_ = path;
  bool created = false;
  pool->fd_ = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (pool->fd_ < 0 && errno == ENOENT) {
    pool->fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    created = pool->fd_ >= 0;
    if (pool->fd_ < 0 && errno == EEXIST) pool->fd_ = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  }
  if (pool->fd_ < 0)
    return Status::system(cat("open pool ", path, " (set CXLCCL_POOL to a device-DAX or a file "
                              "on /dev/shm or hugetlbfs)"),
                          errno);
  if (created) fchmod(pool->fd_, 0666);  // the umask must not lock other users' ranks out
  created = false;  // decided under the lock: whoever finds the file empty formats it
  struct stat st;
  if (fstat(pool->fd_, &st) != 0) return Status::system(cat("stat pool ", path), errno);
  CXLCCL_TRY(pool->lock());
  Status status;
  if (isDeviceDax(st)) {
    status = daxSize(path, st, &pool->bytes_);
  } else {
    if (fstat(pool->fd_, &st) != 0) status = Status::system(cat("stat pool ", path), errno);
    pool->bytes_ = static_cast<std::uint64_t>(st.st_size);
    if (status.ok() && pool->bytes_ == 0) {
      std::uint64_t bytes = (createBytes + kPoolAlign - 1) / kPoolAlign * kPoolAlign;
      if (ftruncate(pool->fd_, static_cast<off_t>(bytes)) != 0)
        status = Status::system(cat("size pool ", path, " to ", bytes, " bytes"), errno);
      pool->bytes_ = bytes;
      created = true;
    }
  }
  if (status.ok() && pool->bytes_ < 2 * kPoolAlign)
    status = Status::error(cxlcclInvalidUsage, "pool ", path, " has ", pool->bytes_,
                           " bytes; a pool needs at least 4 MiB");
  if (status.ok()) {
    pool->mappedBytes_ = pool->bytes_ / kPoolAlign * kPoolAlign;
    void* base = mmap(nullptr, pool->mappedBytes_, PROT_READ | PROT_WRITE, MAP_SHARED, pool->fd_, 0);
    if (base == MAP_FAILED) {
      status = Status::system(cat("mmap pool ", path, " (", pool->mappedBytes_, " bytes)"), errno);
      pool->mappedBytes_ = 0;
    } else {
      pool->base_ = static_cast<std::byte*>(base);
    }
  }
  if (status.ok() && created) {
    PoolHeader* h = header(pool->base_);
    std::memset(pool->base_, 0, kTableOffset + kMaxRegions * sizeof(RegionEntry));
    std::memcpy(h->magic, kMagic, sizeof kMagic);
    h->version = kPoolVersion;
    h->flags = kPoolFlagCoherent;  // created here: a file on this host
    h->bytes = pool->mappedBytes_;
    h->generation = timeSeed();
    h->dataOffset = kPoolAlign;
    h->maxRegions = kMaxRegions;
    h->tableOffset = kTableOffset;
    pool->publishHeader();
  }
  if (status.ok()) {
    pool->refreshHeader();
    const PoolHeader* h = header(pool->base_);
    if (std::memcmp(h->magic, kMagic, sizeof kMagic) != 0) {
      status = Status::error(cxlcclInvalidUsage, "pool ", path,
                             " has no cxlccl header (format it: cxlccl-pool format ", path, ")");
    } else if (h->version != kPoolVersion) {
      status = Status::error(cxlcclInvalidUsage, "pool ", path, " has header version ",
                             h->version, ", this library reads version ", kPoolVersion,
                             " (reformat it with this library's cxlccl-pool format)");
    } else if (h->bytes > pool->mappedBytes_ || h->maxRegions != kMaxRegions ||
               h->tableOffset != kTableOffset || h->dataOffset != kPoolAlign) {
      status = Status::error(cxlcclInvalidUsage, "pool ", path, " has a header whose layout (",
                             h->bytes, " bytes, ", h->maxRegions, " regions) does not fit its ",
                             pool->mappedBytes_, " mapped bytes: reformat it (cxlccl-pool format)");
    }
  }
  pool->unlock();
  if (!status.ok()) return status;
  *out = std::move(pool);
  return Status::success();
}

Status Pool::format(const std::string& path, std::uint64_t createBytes, PoolFormat format) {
  std::shared_ptr<Pool> pool;
  Status opened = open(path, createBytes, &pool);
  if (!opened.ok() && pool == nullptr) {
    // A pool without a header (a new device): map it raw and write one.
    int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) return Status::system(cat("open pool ", path), errno);
    struct stat st;
    std::uint64_t bytes = 0;
    if (fstat(fd, &st) != 0) {
      ::close(fd);
      return Status::system(cat("stat pool ", path), errno);
    }
    Status sized = isDeviceDax(st) ? daxSize(path, st, &bytes)
                                   : Status::success();
    if (!isDeviceDax(st)) bytes = static_cast<std::uint64_t>(st.st_size);
    if (!sized.ok()) {
      ::close(fd);
      return sized;
    }
    if (bytes < 2 * kPoolAlign) {
      ::close(fd);
      return Status::error(cxlcclInvalidUsage, "pool ", path, " has ", bytes,
                           " bytes; a pool needs at least 4 MiB");
    }
    pool.reset(new Pool());
    pool->path_ = path;
    pool->fd_ = fd;
    pool->bytes_ = bytes;
    pool->mappedBytes_ = bytes / kPoolAlign * kPoolAlign;
    void* base = mmap(nullptr, pool->mappedBytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (base == MAP_FAILED) {
      pool->mappedBytes_ = 0;
      return Status::system(cat("mmap pool ", path), errno);
    }
    pool->base_ = static_cast<std::byte*>(base);
  }
  CXLCCL_TRY(pool->lock());
  PoolHeader* h = header(pool->base_);
  std::uint64_t previous = std::memcmp(h->magic, kMagic, sizeof kMagic) == 0 ? h->generation : 0;
  std::memset(pool->base_, 0, kTableOffset + kMaxRegions * sizeof(RegionEntry));
  std::memcpy(h->magic, kMagic, sizeof kMagic);
  h->version = kPoolVersion;
  h->flags = format.coherent ? kPoolFlagCoherent : 0;
  h->bytes = pool->mappedBytes_;
  h->generation = std::max(previous + 1, timeSeed());
  h->dataOffset = kPoolAlign;
  h->maxRegions = kMaxRegions;
  h->tableOffset = kTableOffset;
  pool->publishHeader();
  pool->unlock();
  return Status::success();
}

Pool::~Pool() {
  if (base_ != nullptr) munmap(base_, mappedBytes_);
  if (fd_ >= 0) ::close(fd_);
}

Status Pool::lock() const {
  while (flock(fd_, LOCK_EX) != 0) {
    if (errno != EINTR) return Status::system(cat("lock pool ", path_), errno);
  }
  return Status::success();
}

void Pool::unlock() const { flock(fd_, LOCK_UN); }

// The header and table are read and written by every host: always through the cache-line
// primitives, whatever the pool's flags say (they are rare and small).
void Pool::refreshHeader() const {
  invalidateLines(base_, kTableOffset + kMaxRegions * sizeof(RegionEntry));
}

void Pool::publishHeader() const {
  writeBackLines(base_, kTableOffset + kMaxRegions * sizeof(RegionEntry));
}

std::uint64_t Pool::generation() const { return header(base_)->generation; }
bool Pool::coherent() const { return (header(base_)->flags & kPoolFlagCoherent) != 0; }

Status Pool::allocate(const RegionNonce& nonce, std::uint64_t bytes, std::uint32_t nranks,
                      RegionInfo* out) {
  bytes = (bytes + kPoolAlign - 1) / kPoolAlign * kPoolAlign;
  CXLCCL_TRY(lock());
  refreshHeader();
  RegionEntry* entries = table(base_);
  std::vector<std::pair<std::uint64_t, std::uint64_t>> used;  // offset, bytes
  RegionEntry* freeEntry = nullptr;
  for (std::uint32_t i = 0; i < kMaxRegions; ++i) {
    RegionEntry& e = entries[i];
    if (e.state == static_cast<std::uint32_t>(RegionState::ready) && e.nonceHigh == nonce.high &&
        e.nonceLow == nonce.low) {
      e.state = static_cast<std::uint32_t>(RegionState::free);  // a stale run of the same job
    }
    if (e.state == static_cast<std::uint32_t>(RegionState::ready)) {
      used.emplace_back(e.offset, e.bytes);
    } else if (freeEntry == nullptr) {
      freeEntry = &e;
    }
  }
  std::sort(used.begin(), used.end());
  std::uint64_t offset = header(base_)->dataOffset;
  std::uint64_t end = header(base_)->bytes;
  bool found = false;
  for (const auto& [usedOffset, usedBytes] : used) {
    if (usedOffset >= offset + bytes) {
      found = true;
      break;
    }
    offset = std::max(offset, usedOffset + usedBytes);
  }
  if (!found) found = offset + bytes <= end;
  Status status;
  if (freeEntry == nullptr) {
    status = Status::error(cxlcclSystemError, "pool ", path_, " has all ", kMaxRegions,
                           " regions in use (cxlccl-pool list; cxlccl-pool reclaim frees those "
                           "of dead jobs)");
  } else if (!found) {
    status = Status::error(cxlcclSystemError, "pool ", path_, " has no free ", bytes,
                           " bytes for a communicator of ", nranks, " ranks (", freeBytes(),
                           " free in total; cxlccl-pool reclaim frees dead jobs' regions, or use "
                           "a larger pool: CXLCCL_POOL_SIZE for a new file)");
  } else {
    freeEntry->nonceHigh = nonce.high;
    freeEntry->nonceLow = nonce.low;
    freeEntry->offset = offset;
    freeEntry->bytes = bytes;
    freeEntry->generation = header(base_)->generation;
    freeEntry->nranks = nranks;
    freeEntry->creatorPid = static_cast<std::uint32_t>(getpid());
    freeEntry->state = static_cast<std::uint32_t>(RegionState::ready);
    *out = RegionInfo{nonce, offset, bytes, freeEntry->generation, nranks, freeEntry->creatorPid};
  }
  publishHeader();
  unlock();
  return status;
}

bool Pool::find(const RegionNonce& nonce, RegionInfo* out) const {
  refreshHeader();
  for (const RegionInfo& region : regions()) {
    if (region.nonce == nonce) {
      *out = region;
      return true;
    }
  }
  return false;
}

Status Pool::release(const RegionInfo& region) {
  CXLCCL_TRY(lock());
  refreshHeader();
  RegionEntry* entries = table(base_);
  for (std::uint32_t i = 0; i < kMaxRegions; ++i) {
    RegionEntry& e = entries[i];
    if (e.state == static_cast<std::uint32_t>(RegionState::ready) &&
        e.nonceHigh == region.nonce.high && e.nonceLow == region.nonce.low &&
        e.offset == region.offset && e.generation == region.generation) {
      e.state = static_cast<std::uint32_t>(RegionState::free);
    }
  }
  publishHeader();
  unlock();
  return Status::success();
}

std::vector<RegionInfo> Pool::regions() const {
  std::vector<RegionInfo> out;
  const RegionEntry* entries = table(base_);
  for (std::uint32_t i = 0; i < kMaxRegions; ++i) {
    const RegionEntry& e = entries[i];
    if (e.state != static_cast<std::uint32_t>(RegionState::ready)) continue;
    out.push_back(RegionInfo{{e.nonceHigh, e.nonceLow}, e.offset, e.bytes, e.generation,
                             e.nranks, e.creatorPid});
  }
  return out;
}

std::uint64_t Pool::freeBytes() const {
  std::uint64_t used = 0;
  for (const RegionInfo& region : regions()) used += region.bytes;
  return header(base_)->bytes - header(base_)->dataOffset - used;
}

}  // namespace cxlccl
