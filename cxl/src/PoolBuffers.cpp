#include "PoolBuffers.h"

#include <sys/random.h>

#include <atomic>
#include <cerrno>
#include <map>
#include <memory>
#include <mutex>

#include "Options.h"
#include "Pool.h"

namespace cxlccl {
namespace {

struct Buffers {
  std::mutex mutex;
  std::shared_ptr<Pool> pool;                    // opened by the first allocation, while any is left
  std::map<std::uintptr_t, RegionInfo> byStart;  // the buffers, by address
  std::atomic<std::size_t> count{0};             // byStart's size, read without the lock
};

Buffers& buffers() {
  static Buffers* b = new Buffers();  // never destroyed: buffers may outlive static destructors
  return *b;
}

}  // namespace

Status poolBufferAlloc(std::size_t bytes, void** out) {
  if (out == nullptr) return Status::error(cxlcclInvalidArgument, "MemAlloc: ptr is NULL");
  *out = nullptr;
  if (bytes == 0) return Status::error(cxlcclInvalidArgument, "MemAlloc: size is 0");
  Buffers& b = buffers();
  std::lock_guard<std::mutex> lock(b.mutex);
  if (b.pool == nullptr) {
    std::uint64_t createBytes = 0;
    CXLCCL_TRY(poolCreateBytes(&createBytes));
    CXLCCL_TRY(Pool::open(poolPath(), createBytes, &b.pool));
  }
  std::uint64_t words[2];
  if (getrandom(words, sizeof words, 0) != sizeof words) return Status::system("getrandom for a buffer's name", errno);
  RegionInfo region;
  CXLCCL_TRY(b.pool->allocate({words[0], words[1] | 1}, bytes, 0, &region));
  std::byte* start = b.pool->base() + region.offset;
  b.byStart[reinterpret_cast<std::uintptr_t>(start)] = region;
  b.count.store(b.byStart.size(), std::memory_order_release);
  *out = start;
  return Status::success();
}

Status poolBufferFree(void* p) {
  Buffers& b = buffers();
  std::lock_guard<std::mutex> lock(b.mutex);
  auto it = b.byStart.find(reinterpret_cast<std::uintptr_t>(p));
  if (p == nullptr || it == b.byStart.end())
    return Status::error(cxlcclInvalidArgument, "MemFree: ", p, " is not a buffer from cxlcclMemAlloc");
  Status status = b.pool->release(it->second);
  b.byStart.erase(it);
  b.count.store(b.byStart.size(), std::memory_order_release);
  if (b.byStart.empty()) b.pool.reset();  // the next buffer comes from the CXLCCL_POOL of then
  return status;
}

bool poolAddressOf(const void* p, std::size_t n, PoolAddress* out) {
  Buffers& b = buffers();
  if (b.count.load(std::memory_order_acquire) == 0) return false;  // the usual case: no lock taken
  std::lock_guard<std::mutex> lock(b.mutex);
  auto at = reinterpret_cast<std::uintptr_t>(p);
  auto it = b.byStart.upper_bound(at);
  if (it == b.byStart.begin()) return false;
  --it;
  const RegionInfo& region = it->second;
  if (at + n > it->first + region.bytes) return false;
  *out = {b.pool->path(), b.pool->generation(), region.offset + (at - it->first)};
  return true;
}

}  // namespace cxlccl
