#include "Copy.h"

#include <immintrin.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>

namespace cxlccl {
namespace {

__attribute__((target("avx2"))) void streamCopy(void* dst, const void* src, std::size_t n) {
  auto* d = static_cast<char*>(dst);
  const auto* s = static_cast<const char*>(src);
  // Align the destination to 32 bytes with an ordinary copy of the head.
  std::size_t head = (32 - (reinterpret_cast<std::uintptr_t>(d) & 31)) & 31;
  std::memcpy(d, s, head);
  d += head;
  s += head;
  n -= head;
  std::size_t i = 0;
  for (; i + 128 <= n; i += 128) {
    __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i));
    __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i + 32));
    __m256i c = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i + 64));
    __m256i e = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i + 96));
    _mm256_stream_si256(reinterpret_cast<__m256i*>(d + i), a);
    _mm256_stream_si256(reinterpret_cast<__m256i*>(d + i + 32), b);
    _mm256_stream_si256(reinterpret_cast<__m256i*>(d + i + 64), c);
    _mm256_stream_si256(reinterpret_cast<__m256i*>(d + i + 96), e);
  }
  std::memcpy(d + i, s + i, n - i);
}

bool hasAvx2() {
  static const bool avx2 = __builtin_cpu_supports("avx2");
  return avx2;
}

}  // namespace

void copyToPool(void* dst, const void* src, std::size_t n, bool streaming) {
  if (streaming && n >= kStreamingCopyMin && hasAvx2()) {
    streamCopy(dst, src, n);
    _mm_sfence();  // non-temporal stores are not ordered with the ones that follow
  } else {
    std::memcpy(dst, src, n);  // (glibc fences its own non-temporal stores, when it uses them)
  }
}

std::size_t streamingDestinationMin() {
  static const std::size_t bytes = [] {
    long cache = sysconf(_SC_LEVEL3_CACHE_SIZE);
    if (cache <= 0) cache = sysconf(_SC_LEVEL2_CACHE_SIZE);
    return cache > 0 ? static_cast<std::size_t>(cache) / 2 : std::size_t{16} << 20;
  }();
  return bytes;
}

}  // namespace cxlccl
