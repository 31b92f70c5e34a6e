#include "Layout.h"

#include <algorithm>

namespace cxlccl {

static std::size_t alignUp(std::size_t value, std::size_t align) {
  return (value + align - 1) / align * align;
}

Layout::Layout(const LayoutParams& params) : params_(params) {
  std::size_t n = static_cast<std::size_t>(params.nranks);
  std::size_t lines = 1 + 2 * n + 3 * n * n + n * static_cast<std::size_t>(ringHeaders()) +
                      n * n * kP2pHeaders;
  dataOffset_ = alignUp(lines * params.lineBytes, 4096);
  p2pOffset_ = dataOffset_ + n * static_cast<std::size_t>(params.chunks) * params.chunkBytes;
  // A pair's ring: half the bytes of the writer's ring shared among its peers, in whole pages,
  // and at least chunkBytes / 8 a slot -- whole lines, so that no line holds two pairs' data.
  const std::size_t share = static_cast<std::size_t>(params.chunks) * params.chunkBytes / 2 / (n > 1 ? n - 1 : 1);
  p2pChunkBytes_ = std::max(alignUp(params.chunkBytes / 8, params.lineBytes), share / kP2pChunks / 4096 * 4096);
  bytes_ = alignUp(p2pOffset_ + n * n * kP2pChunks * p2pChunkBytes(), 4096);
}

}  // namespace cxlccl
