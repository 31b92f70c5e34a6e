// Compiled with -mavx2 (cxl/CMakeLists.txt): XXH3 picks its AVX2 code. Everything xxhash defines
// here is static (XXH_INLINE_ALL), so no AVX2 code is shared with the rest of the library.
#include "BlockHash.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace cxlccl {

std::uint64_t hashBlockAvx2(const std::byte* p, std::size_t bytes) { return XXH3_64bits(p, bytes); }

}  // namespace cxlccl
