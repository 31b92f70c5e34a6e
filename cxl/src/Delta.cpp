#include "Delta.h"

#include <sys/random.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "CacheLines.h"

namespace cxlccl {
namespace {

// Blocks this size or larger go through delta publish (smaller ones: two extra flag exchanges
// cost more than the copy they could save).
constexpr std::size_t kDeltaMinBytes = 64 << 10;
// A receive buffer is checked and re-hashed in blocks of this size: small, so that after a few
// changed lines only their blocks are hashed again.
constexpr std::size_t kHashBlock = 1 << 10;
// auto: a writer whose compare found more than this share of lines changed sends by ring for
// kRingCalls calls, then through the mirror whole, then compares again (docs/benchmarks.md, "Delta publish": the crossover).
constexpr double kCrossover = 0.05;
constexpr int kRingCalls = 31;
// Mirrors a rank keeps (least recently used dropped first), and receive buffers it tracks.
constexpr std::size_t kMaxMirrors = 8;
constexpr std::size_t kMaxHeld = 64;

constexpr std::size_t lineCount(std::size_t bytes) { return (bytes + kCacheLine - 1) / kCacheLine; }
constexpr std::size_t roundUp(std::size_t v, std::size_t to) { return (v + to - 1) / to * to; }
// A mirror: the data (whole lines), then the change bits, one 64-bit word per 64 lines.
std::size_t bitsOffset(std::size_t bytes) { return roundUp(lineCount(bytes) * kCacheLine, 4096); }
std::size_t bitsBytes(std::size_t bytes) { return roundUp(lineCount(bytes), 64) / 8; }

// Whether two whole lines are equal: inlined and vectorised, where memcmp is a call a line.
bool sameLine(const std::byte* a, const std::byte* b) {
  std::uint64_t x[8], y[8];
  std::memcpy(x, a, sizeof x);
  std::memcpy(y, b, sizeof y);
  std::uint64_t diff = 0;
  for (int i = 0; i < 8; ++i) diff |= x[i] ^ y[i];
  return diff == 0;
}

std::uint64_t hashBlock(const std::byte* p, std::size_t n) { return XXH3_64bits(p, n); }

void hashBlocks(const std::byte* p, std::size_t bytes, std::size_t first, std::size_t last,
                std::vector<std::uint64_t>* hashes) {
  for (std::size_t b = first; b < last; ++b) {
    std::size_t at = b * kHashBlock;
    (*hashes)[b] = hashBlock(p + at, std::min(kHashBlock, bytes - at));
  }
}

}  // namespace

struct DeltaState::Mirror {
  int kind = 0;
  const void* src = nullptr;
  std::size_t bytes = 0;
  RegionInfo region;
  std::unique_ptr<RegionView> view;
  std::uint64_t id = 0;
  std::uint64_t generation = 0;  // 0: its data is not what readers were last sent
  double changedShare = 0;       // of the lines, in the last compare
  int ringCalls = 0;             // auto: calls sent by ring since the last compare
};

// A receive buffer as this rank last filled it from a writer's mirror.
struct DeltaState::Held {
  int writer = 0;
  const void* dst = nullptr;
  std::size_t bytes = 0;
  std::uint64_t mirror = 0;
  std::uint64_t generation = 0;
  std::vector<std::uint64_t> hashes;  // per kHashBlock of dst
};

// A peer's mirror as this rank sees it (simulate: a private copy of the region).
struct DeltaState::Seen {
  int writer = 0;
  std::uint64_t mirror = 0;
  std::unique_ptr<RegionView> view;
};

DeltaState::DeltaState(Comm& comm, DeltaMode mode) : comm_(comm), mode_(mode) {}

DeltaState::~DeltaState() {
  for (Mirror& m : mirrors_) {
    m.view.reset();
    Status freed = comm_.poolHandle()->release(m.region);
    if (!freed.ok()) warn("delta publish: freeing a mirror: ", freed.message);
  }
}

bool DeltaState::applies(std::size_t bytes) const { return mode_ != DeltaMode::off && bytes >= kDeltaMinBytes; }

Status DeltaState::mirrorFor(int kind, const void* src, std::size_t bytes, Mirror** out) {
  *out = nullptr;
  for (auto it = mirrors_.begin(); it != mirrors_.end(); ++it) {
    if (it->kind == kind && it->src == src && it->bytes == bytes) {
      mirrors_.splice(mirrors_.begin(), mirrors_, it);
      *out = &mirrors_.front();
      return Status::success();
    }
  }
  std::uint64_t words[2];  // a random name, like a buffer's
  if (getrandom(words, sizeof words, 0) != sizeof words) return Status::system("getrandom for a mirror's name", errno);
  Mirror m;
  m.kind = kind;
  m.src = src;
  m.bytes = bytes;
  m.id = nextMirror_++;
  CXLCCL_TRY(comm_.poolHandle()->allocate({words[0], words[1] | 1}, bitsOffset(bytes) + bitsBytes(bytes), 0, &m.region));
  m.view = std::make_unique<RegionView>(comm_.pool().base() + m.region.offset, m.region.bytes, comm_.view().mode());
  mirrors_.push_front(std::move(m));
  if (mirrors_.size() > kMaxMirrors) {
    comm_.poolHandle()->release(mirrors_.back().region);
    mirrors_.pop_back();
  }
  *out = &mirrors_.front();
  return Status::success();
}

// The changed lines go into the mirror (and are published one by one), their bits set.
void DeltaState::compareInto(Mirror& m, const std::byte* src) {
  const RegionView& view = *m.view;
  std::byte* data = view.at(0);
  auto* bits = reinterpret_cast<std::uint64_t*>(view.at(bitsOffset(m.bytes)));
  const std::size_t lines = lineCount(m.bytes);
  std::size_t changed = 0;
  for (std::size_t word = 0; word * 64 < lines; ++word) {
    std::uint64_t set = 0;
    const std::size_t first = word * 64, last = std::min(lines, first + 64);
    const std::size_t from = first * kCacheLine, to = std::min(m.bytes, last * kCacheLine);
    if (std::memcmp(data + from, src + from, to - from) != 0) {
      for (std::size_t line = first; line < last; ++line) {
        const std::size_t at = line * kCacheLine, n = std::min(kCacheLine, m.bytes - at);
        if (n == kCacheLine ? sameLine(data + at, src + at) : std::memcmp(data + at, src + at, n) == 0) continue;
        std::memcpy(data + at, src + at, n);
        view.publish(at, n);
        set |= 1ull << (line - first);
        ++changed;
      }
    }
    bits[word] = set;
  }
  view.publish(bitsOffset(m.bytes), bitsBytes(m.bytes));
  counters_.linesCompared += lines;
  counters_.linesChanged += changed;
  m.changedShare = static_cast<double>(changed) / static_cast<double>(lines);
  // Read: the mirror to compare, and the buffer; written: the lines and the bits.
  comm_.traffic().read += m.bytes;
  comm_.traffic().written += changed * kCacheLine + bitsBytes(m.bytes);
}

Status DeltaState::prepare(int kind, const void* src, std::size_t bytes, bool onGpu, DeltaAnnouncement* out) {
  *out = DeltaAnnouncement{};
  ++counters_.calls;
  Mirror* m = nullptr;
  if (!onGpu) {
    Status made = mirrorFor(kind, src, bytes, &m);
    if (!made.ok() && !loggedNoRoom_) {
      loggedNoRoom_ = true;
      warn("delta publish: no mirror of ", bytes, " bytes in the pool (", made.message,
           "): blocks go the usual way until one fits");
    }
  }
  const bool skip = m != nullptr && mode_ == DeltaMode::automatic && m->changedShare > kCrossover &&
                    m->ringCalls < kRingCalls;
  if (m == nullptr || skip) {
    if (m != nullptr) {
      ++m->ringCalls;
      m->generation = 0;  // the readers get this call's data by ring, not from the mirror
    }
    ++counters_.ringPublishes;
    out->mode = static_cast<std::uint64_t>(DeltaSend::ring);
    return Status::success();
  }
  const std::byte* data = static_cast<const std::byte*>(src);
  out->ref = m->region.offset + 1;
  out->regionBytes = m->region.bytes;
  out->mirror = m->id;
  out->previous = m->generation;
  m->ringCalls = 0;
  // A new generation before the mirror changes: a call that fails half way leaves no reader
  // believing it holds what the mirror holds.
  m->generation = 0;
  if (out->previous == 0) {
    std::memcpy(m->view->at(0), data, bytes);
    m->view->publish(0, bytes);
    m->changedShare = 0;  // unknown: the next call compares
    comm_.traffic().written += bytes;
    ++counters_.fullPublishes;
    out->mode = static_cast<std::uint64_t>(DeltaSend::full);
  } else {
    compareInto(*m, data);
    ++counters_.linePublishes;
    out->mode = static_cast<std::uint64_t>(DeltaSend::lines);
  }
  m->generation = out->generation = nextGeneration_++;
  return Status::success();
}

DeltaState::Held* DeltaState::heldFor(int writer, const void* dst, std::size_t bytes, bool create) {
  for (auto it = held_.begin(); it != held_.end(); ++it) {
    if (it->writer == writer && it->dst == dst && it->bytes == bytes) {
      held_.splice(held_.begin(), held_, it);
      return &held_.front();
    }
  }
  if (!create) return nullptr;
  held_.push_front(Held{writer, dst, bytes, 0, 0, {}});
  if (held_.size() > kMaxHeld) held_.pop_back();
  return &held_.front();
}

bool DeltaState::intact(int writer, const void* dst, std::size_t bytes) {
  Held* h = heldFor(writer, dst, bytes, false);
  if (h == nullptr || h->generation == 0) return false;
  const auto* p = static_cast<const std::byte*>(dst);
  for (std::size_t b = 0; b < h->hashes.size(); ++b) {
    std::size_t at = b * kHashBlock;
    if (hashBlock(p + at, std::min(kHashBlock, bytes - at)) != h->hashes[b]) return false;
  }
  return true;
}

void DeltaState::forget(int writer, const void* dst, std::size_t bytes) {
  if (Held* h = heldFor(writer, dst, bytes, false)) h->generation = 0;
}

Status DeltaState::viewOf(int writer, const DeltaAnnouncement& a, RegionView** out) {
  for (auto it = seen_.begin(); it != seen_.end(); ++it) {
    if (it->writer == writer && it->mirror == a.mirror) {
      *out = it->view.get();
      return Status::success();
    }
  }
  if (a.ref == 0 || a.ref - 1 > comm_.pool().bytes() || a.regionBytes > comm_.pool().bytes() - (a.ref - 1))
    return Status::error(cxlcclInternalError, comm_.describeRank(writer), " announced a mirror at offset ", a.ref - 1,
                         " (", a.regionBytes, " bytes) that ends beyond the pool's ", comm_.pool().bytes(), " bytes");
  seen_.push_front(Seen{writer, a.mirror,
                        std::make_unique<RegionView>(comm_.pool().base() + (a.ref - 1), a.regionBytes, comm_.view().mode())});
  if (seen_.size() > kMaxMirrors * static_cast<std::size_t>(comm_.nranks())) seen_.pop_back();
  *out = seen_.front().view.get();
  return Status::success();
}

Status DeltaState::apply(int writer, const DeltaAnnouncement& a, void* dst, std::size_t bytes, bool intact,
                         Operation& op, bool onGpu) {
  ++counters_.calls;
  auto send = static_cast<DeltaSend>(a.mode);
  if (send == DeltaSend::ring) {
    forget(writer, dst, bytes);
    return Status::success();
  }
  if (send != DeltaSend::full && send != DeltaSend::lines)
    return Status::error(cxlcclInternalError, comm_.describeRank(writer), " announced delta mode ", a.mode);
  if (a.regionBytes < bitsOffset(bytes) + bitsBytes(bytes))
    return Status::error(cxlcclInvalidUsage, comm_.describeRank(writer), " announced a mirror of ", a.regionBytes,
                         " bytes for a block of ", bytes, ": the ranks called with different sizes");
  RegionView* view = nullptr;
  CXLCCL_TRY(viewOf(writer, a, &view));
  Held* h = onGpu ? nullptr : heldFor(writer, dst, bytes, true);
  auto* out = static_cast<std::byte*>(dst);
  const std::byte* data = view->at(0);
  const std::size_t blocks = (bytes + kHashBlock - 1) / kHashBlock;
  const bool lines = send == DeltaSend::lines && intact && h != nullptr && h->mirror == a.mirror &&
                     h->generation == a.previous;
  if (h != nullptr) h->generation = 0;  // until this call's data is all there
  if (lines) {
    const std::size_t at = bitsOffset(bytes), n = bitsBytes(bytes);
    view->refresh(at, n);
    const auto* bits = reinterpret_cast<const std::uint64_t*>(view->at(at));
    std::size_t copied = 0;
    for (std::size_t word = 0; word < n / 8; ++word) {
      std::uint64_t set = bits[word];
      while (set != 0) {
        // A run of changed lines: refreshed, copied, and its blocks hashed again.
        const int first = __builtin_ctzll(set);
        const std::uint64_t rest = set >> first;
        const int count = ~rest == 0 ? 64 : __builtin_ctzll(~rest);
        set &= count == 64 ? 0 : ~(((1ull << count) - 1) << first);
        const std::size_t from = (word * 64 + static_cast<std::size_t>(first)) * kCacheLine;
        const std::size_t len = std::min(static_cast<std::size_t>(count) * kCacheLine, bytes - from);
        view->refresh(from, len);
        std::memcpy(out + from, data + from, len);
        copied += len;
        hashBlocks(out, bytes, from / kHashBlock, (from + len + kHashBlock - 1) / kHashBlock, &h->hashes);
      }
    }
    comm_.traffic().read += n + copied;
    ++counters_.lineApplies;
  } else {
    view->refresh(0, bytes);
    if (onGpu) {
      CXLCCL_TRY(op.copyNow(out, data, bytes));
    } else {
      // Copied and hashed a stretch at a time, so the hash reads it from the cache.
      constexpr std::size_t kStretch = 64 * kHashBlock;
      h->hashes.resize(blocks);
      for (std::size_t from = 0; from < bytes; from += kStretch) {
        const std::size_t len = std::min(kStretch, bytes - from);
        std::memcpy(out + from, data + from, len);
        hashBlocks(out, bytes, from / kHashBlock, (from + len + kHashBlock - 1) / kHashBlock, &h->hashes);
      }
    }
    comm_.traffic().read += bytes;
    ++counters_.fullApplies;
    if (send == DeltaSend::lines) ++counters_.fallbacks;
  }
  if (h != nullptr) {
    h->mirror = a.mirror;
    h->generation = a.generation;
  }
  return Status::success();
}

}  // namespace cxlccl
