#pragma once
// A 64-bit hash of a block of memory (XXH3), with AVX2 where the CPU has it: delta publish
// hashes whole buffers every call, at memory speed only with the wider vectors.

#include <cstddef>
#include <cstdint>

namespace cxlccl {

std::uint64_t hashBlock(const std::byte* p, std::size_t bytes);

// The AVX2 build of the same hash (BlockHashAvx2.cpp, compiled with -mavx2); called only where
// the CPU supports it.
std::uint64_t hashBlockAvx2(const std::byte* p, std::size_t bytes);

}  // namespace cxlccl
