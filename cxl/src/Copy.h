#pragma once
// Copies into and out of the pool. On memory without coherence between hosts (flush mode) large
// chunks go into the pool with non-temporal stores: they land in memory, not in the writer's
// cache, so the write-back that must follow finds nothing to write. On one host (hardware mode)
// ordinary stores are faster there: measured with cxlccl-perf, streaming stores cost 1.3-1.6x at
// 64 KiB-1 MiB. Out of the pool, a piece too large to stay in the cache goes to the caller's
// buffer with non-temporal stores: ordinary ones would read each destination line first and
// evict lines the call still reads (2 ranks, 64 MiB: Gather, Send/Recv 1.25x as fast, AllToAll
// 1.1-1.25x, Broadcast, AllReduce 1.07-1.1x, Scatter unchanged; docs/benchmarks.md).

#include <cstddef>

namespace cxlccl {

inline constexpr std::size_t kStreamingCopyMin = 32 << 10;

// memcpy; with `streaming`, non-temporal stores for n >= kStreamingCopyMin when the CPU has AVX2.
// Ordered with the stores that follow, like a plain store (a fence after non-temporal ones only:
// a fence after every copy would wait each time for the last flag store to leave this core).
void copyToPool(void* dst, const void* src, std::size_t n, bool streaming);

// A piece of at least this many bytes goes to its destination with streaming stores: half the
// last-level cache (sysconf), or 16 MiB where the C library does not know it.
std::size_t streamingDestinationMin();

}  // namespace cxlccl
