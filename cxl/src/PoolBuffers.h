#pragma once
// Buffers in the pool (cxlcclMemAlloc). A collective whose send buffer lies in one publishes a
// reference to the data where it is instead of copying it into the rank's ring: readers copy it
// out straight from there, one copy instead of two. Each buffer is a region of the pool's table
// (nranks 0: a buffer, not a communicator) owned by the process that allocated it, mapped
// through one Pool per process.

#include <cstddef>
#include <cstdint>
#include <string>

#include "Status.h"

namespace cxlccl {

// `bytes` (rounded up to 2 MiB) in the pool at CXLCCL_POOL.
Status poolBufferAlloc(std::size_t bytes, void** out);
Status poolBufferFree(void* p);

// Where [p, p + n) lies when it is inside one pool buffer: the pool (as CXLCCL_POOL named it,
// and its generation) and the offset in it.
struct PoolAddress {
  std::string pool;
  std::uint64_t generation = 0;
  std::uint64_t offset = 0;
};
bool poolAddressOf(const void* p, std::size_t n, PoolAddress* out);

}  // namespace cxlccl
