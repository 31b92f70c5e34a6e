#include "BlockHash.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace cxlccl {

std::uint64_t hashBlock(const std::byte* p, std::size_t bytes) {
#if defined(__x86_64__)
  static const bool avx2 = __builtin_cpu_supports("avx2");
  if (avx2) return hashBlockAvx2(p, bytes);
#endif
  return XXH3_64bits(p, bytes);
}

}  // namespace cxlccl
