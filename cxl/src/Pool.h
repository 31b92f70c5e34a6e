#pragma once
// A pool: the shared memory every rank maps. Its first 2 MiB hold a header (magic, version, size,
// layout, generation, flags) and a table of regions, each allocated to one communicator; the
// rest is handed out in 2 MiB-aligned regions. The header is checked on every attach.
//
// Writers of the table hold an flock on the pool (one host). Hosts that share a device pool must
// allocate from one host, e.g. through the rank 0s of their jobs running there (docs/cxlccl.md).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "PoolMapping.h"
#include "Status.h"

namespace cxlccl {

inline constexpr std::size_t kPoolAlign = 2u << 20;
inline constexpr std::uint32_t kPoolVersion = 1;
inline constexpr std::uint32_t kPoolFlagCoherent = 1;  // one host: no cache-line flushes needed

struct RegionNonce {
  std::uint64_t high = 0;
  std::uint64_t low = 0;
  bool operator==(const RegionNonce&) const = default;
};

enum class RegionState : std::uint32_t { free = 0, ready = 2 };

struct RegionInfo {
  RegionNonce nonce;
  std::uint64_t offset = 0;
  std::uint64_t bytes = 0;
  std::uint64_t generation = 0;  // the pool's generation when it was allocated
  std::uint32_t nranks = 0;
  std::uint32_t creatorPid = 0;
  std::uint32_t ownerUid = 0;
};

// Who asks for a region: this process, or (in mtmd) the peer of a control-socket request.
struct Requester {
  std::uint32_t pid = 0;
  std::uint32_t uid = 0;
  static Requester self();
};

struct PoolFormat {
  bool coherent = false;
};

class Pool {
 public:
  // Maps the pool at `path`: a device-DAX (/dev/daxX.Y), or a file (hugetlbfs, /dev/shm), or
  // several of them separated by commas to stripe over (PoolMapping.h). A file that does not
  // exist is created with `createBytes` (shared among striped files) and formatted (coherent:
  // one host). "mtmd" or "mtmd:SOCKET" is the pool mtmd owns: its devices come over the socket
  // and allocate() and release() are requests to mtmd (DaemonClient.h).
  static Status open(const std::string& path, std::uint64_t createBytes, std::shared_ptr<Pool>* out);
  // A pool that exists and is formatted, for tools: nothing is created, and read-only unless
  // `writable` (cxlccl-pool info reads; reclaim frees regions). mtmd's pool as open() gets it.
  static Status openExisting(const std::string& path, bool writable, std::shared_ptr<Pool>* out);
  // Writes a fresh header (a new generation): every region is forgotten.
  static Status format(const std::string& path, std::uint64_t createBytes, PoolFormat format);
  ~Pool();

  const std::string& path() const { return spec_; }
  std::byte* base() const { return mapping_->base(); }
  std::uint64_t bytes() const { return mapping_->bytes(); }
  const PoolMapping& mapping() const { return *mapping_; }
  std::uint64_t generation() const;
  bool coherent() const;

  // Allocates `bytes` for a new communicator named `nonce`; an old region of that name is freed.
  Status allocate(const RegionNonce& nonce, std::uint64_t bytes, std::uint32_t nranks, RegionInfo* out, Requester who = Requester::self());
  // The ready region named `nonce`, if any (false when there is none yet).
  bool find(const RegionNonce& nonce, RegionInfo* out) const;
  // Frees the region if it is still the one described (same nonce, offset and generation).
  Status release(const RegionInfo& region);
  // The ready regions of the table. An entry whose offset, size or rank count does not fit the
  // pool is left out, with a warning (checkHeader() refuses a pool that has one when it opens).
  std::vector<RegionInfo> regions() const;
  std::uint64_t freeBytes() const;

 private:
  Pool() = default;
  Status lock() const;
  void unlock() const;
  void refreshHeader() const;
  void publishHeader() const;
  static Status openFromDaemon(const std::string& spec, const std::string& socket, std::shared_ptr<Pool>* out);
  // Under the lock: a fresh header (and stripe labels); the check every attach makes.
  Status writeHeader(bool coherent, std::uint64_t previousGeneration);
  Status checkHeader() const;
  // Every ready entry of the table fits the pool; the error names the entry and its field.
  Status checkTable() const;
  static Status openMapped(const std::string& path, std::uint64_t createBytes, PoolOpenMode mode, std::shared_ptr<Pool>* out);

  std::unique_ptr<PoolMapping> mapping_;
  std::string daemonSocket_;  // set: mtmd owns the pool and makes every change to its table
  std::string spec_;          // as given: the devices' paths, or mtmd's
};

}  // namespace cxlccl
