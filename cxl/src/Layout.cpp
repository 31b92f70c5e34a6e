#include "Layout.h"

#include <algorithm>
#include <cstring>

namespace cxlccl {

static std::size_t alignUp(std::size_t value, std::size_t align) { return (value + align - 1) / align * align; }

LayoutParams layoutParamsOf(const std::byte* header) {
  auto word = [header](std::size_t offset) {
    std::uint64_t v;
    std::memcpy(&v, header + offset, sizeof v);
    return v;
  };
  auto count = [](std::uint64_t v) { return v > 1u << 30 ? -1 : static_cast<int>(v); };
  return LayoutParams{count(word(field::nranks)), word(field::lineBytes), word(field::chunkBytes), count(word(field::chunks))};
}

Status checkLayoutParams(const LayoutParams& p, std::uint64_t regionBytes, const std::string& where) {
  auto bad = [&](const char* field, std::uint64_t value, const char* expected) {
    return Status::error(cxlcclInvalidUsage, where, ": communicator header field ", field, " = ", value, " (expected ", expected,
                         "): the region is corrupt or not a communicator");
  };
  if (p.nranks < 1 || p.nranks > kMaxRanks) return bad("nranks", static_cast<std::uint64_t>(p.nranks), "1..64");
  if (p.lineBytes < 64 || p.lineBytes > 4096 || (p.lineBytes & (p.lineBytes - 1)) != 0)
    return bad("lineBytes", p.lineBytes, "a power of two, 64..4096");
  if (p.chunkBytes < 16384 || p.chunkBytes > (256u << 20) || p.chunkBytes % 4096 != 0)
    return bad("chunkBytes", p.chunkBytes, "a multiple of 4 KiB, 16 KiB..256 MiB");
  if (p.chunks < 2 || p.chunks > 1024) return bad("chunks", static_cast<std::uint64_t>(p.chunks), "2..1024");
  const Layout layout(p);
  if (layout.bytes() > regionBytes)
    return Status::error(cxlcclInvalidUsage, where, ": its communicator's layout needs ", layout.bytes(), " bytes, the region has ",
                         regionBytes, ": the region is corrupt");
  return Status::success();
}

Layout::Layout(const LayoutParams& params) : params_(params) {
  std::size_t n = static_cast<std::size_t>(params.nranks);
  std::size_t lines = 1 + 2 * n + 3 * n * n + n * static_cast<std::size_t>(ringHeaders()) + n * n * kP2pHeaders;
  dataOffset_ = alignUp(lines * params.lineBytes, 4096);
  p2pOffset_ = dataOffset_ + n * static_cast<std::size_t>(params.chunks) * params.chunkBytes;
  // A pair's ring: half the bytes of the writer's ring shared among its peers, in whole pages,
  // and at least chunkBytes / 8 a slot -- whole lines, so that no line holds two pairs' data.
  const std::size_t share = static_cast<std::size_t>(params.chunks) * params.chunkBytes / 2 / (n > 1 ? n - 1 : 1);
  p2pChunkBytes_ = std::max(alignUp(params.chunkBytes / 8, params.lineBytes), share / kP2pChunks / 4096 * 4096);
  bytes_ = alignUp(p2pOffset_ + n * n * kP2pChunks * p2pChunkBytes(), 4096);
}

std::size_t chunkOffsetInSlot(std::size_t slotBytes, int slots, std::uint64_t seq, std::size_t bytes) {
  std::size_t span = (bytes + 4095) & ~std::size_t{4095};
  std::size_t places = span == 0 ? 1 : slotBytes / span;
  if (places <= 1) return 0;
  std::uint64_t lap = (seq - 1) / static_cast<std::uint64_t>(slots);
  return static_cast<std::size_t>(lap % places) * span;
}

}  // namespace cxlccl
