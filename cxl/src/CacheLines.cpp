#include "CacheLines.h"

#include <cpuid.h>
#include <immintrin.h>

#include <cstdint>

#include "Status.h"

namespace cxlccl {
namespace {

struct CpuFeatures {
  bool clwb = false;
  bool clflushopt = false;
};

CpuFeatures probe() {
  CpuFeatures features;
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) != 0) {
    features.clflushopt = (ebx & (1u << 23)) != 0;
    features.clwb = (ebx & (1u << 24)) != 0;
  }
  if (!features.clflushopt) warn("this CPU has no clflushopt: cache lines are flushed with clflush (serialising, slower)");
  return features;
}

const CpuFeatures& features() {
  static const CpuFeatures probed = probe();
  return probed;
}

// [first, end) of the 64-byte lines covering [p, p + n).
struct LineRange {
  std::uintptr_t first;
  std::uintptr_t end;
};
LineRange lines(const void* p, std::size_t n) {
  auto start = reinterpret_cast<std::uintptr_t>(p);
  return {start & ~(kCacheLine - 1), start + n};
}

// (Loops written out: a lambda would not inherit the target attribute the intrinsics need.)
__attribute__((target("clwb"))) void clwbLines(const void* p, std::size_t n) {
  LineRange r = lines(p, n);
  for (auto line = r.first; line < r.end; line += kCacheLine) _mm_clwb(reinterpret_cast<void*>(line));
}

__attribute__((target("clflushopt"))) void clflushoptLines(const void* p, std::size_t n) {
  LineRange r = lines(p, n);
  for (auto line = r.first; line < r.end; line += kCacheLine) _mm_clflushopt(reinterpret_cast<void*>(line));
}

void clflushLines(const void* p, std::size_t n) {
  LineRange r = lines(p, n);
  for (auto line = r.first; line < r.end; line += kCacheLine) _mm_clflush(reinterpret_cast<void*>(line));
}

}  // namespace

void writeBackLines(const void* p, std::size_t n) {
  const auto& cpu = features();
  if (cpu.clwb) {
    clwbLines(p, n);
  } else if (cpu.clflushopt) {
    clflushoptLines(p, n);
  } else {
    clflushLines(p, n);
  }
  _mm_sfence();
}

void invalidateLines(const void* p, std::size_t n) {
  if (features().clflushopt) {
    clflushoptLines(p, n);
  } else {
    clflushLines(p, n);
  }
  _mm_mfence();
}

const char* cacheLineInstructions() {
  const auto& cpu = features();
  if (cpu.clwb) return "clwb+clflushopt";
  return cpu.clflushopt ? "clflushopt" : "clflush";
}

}  // namespace cxlccl
