#pragma once
// Copies into the pool. On memory without coherence between hosts (flush mode) large chunks go
// with non-temporal stores: they land in memory, not in the writer's cache, so the write-back
// that must follow finds nothing to write. On one host (hardware mode) ordinary stores are faster:
// measured with cxlccl-perf, streaming stores cost 1.3-1.6x at 64 KiB-1 MiB (docs/benchmarks.md).

#include <cstddef>

namespace cxlccl {

inline constexpr std::size_t kStreamingCopyMin = 32 << 10;

// memcpy; with `streaming`, non-temporal stores for n >= kStreamingCopyMin when the CPU has AVX2.
// Ordered with the stores that follow, like a plain store (a fence after non-temporal ones only:
// a fence after every copy would wait each time for the last flag store to leave this core).
void copyToPool(void* dst, const void* src, std::size_t n, bool streaming);

}  // namespace cxlccl
