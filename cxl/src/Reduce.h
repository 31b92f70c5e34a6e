#pragma once
// Element types and reduction operators.

#include <cstddef>

#include "cxlccl.h"

namespace cxlccl {

// Bytes per element; 0 for a type out of range.
std::size_t typeSize(cxlcclDataType_t type);
const char* typeName(cxlcclDataType_t type);
const char* opName(cxlcclRedOp_t op);

// out[i] = a[i] op b[i] for `count` elements; `out` may be `a` itself, else overlaps neither.
// fp16 and bf16 are computed in float and rounded to nearest even.
void reduce(void* out, const void* a, const void* b, std::size_t count, cxlcclDataType_t type, cxlcclRedOp_t op);

}  // namespace cxlccl
