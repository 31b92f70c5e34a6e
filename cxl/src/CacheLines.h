#pragma once
// Cache-line maintenance for memory that other hosts write without hardware coherence (CXL 2.0
// multi-host sharing). x86: clwb (write back, keep the line) where the CPU has it, else
// clflushopt, else clflush; invalidation is clflushopt (or clflush) then a fence, so the next load
// misses and reads the device.

#include <cstddef>

namespace cxlccl {

inline constexpr std::size_t kCacheLine = 64;

// Writes the lines covering [p, p + n) back to memory and fences: stores before the call are in
// memory before any store after it.
void writeBackLines(const void* p, std::size_t n);
// Drops the lines covering [p, p + n) from this CPU's caches and fences: loads after the call
// read memory as it is now.
void invalidateLines(const void* p, std::size_t n);
// The instructions used, for messages: "clwb+clflushopt", "clflushopt", "clflush".
const char* cacheLineInstructions();

}  // namespace cxlccl
