#include "Delta.h"

#include <sys/random.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "BlockHash.h"
#include "CacheLines.h"

namespace cxlccl {
namespace {

// Blocks this size or larger go through delta publish (smaller ones: two extra flag exchanges
// cost more than the copy they could save).
constexpr std::size_t kDeltaMinBytes = 64 << 10;
// A block goes in parts of at least this much (and at most kMaxParts of them).
constexpr std::size_t kMinPartBytes = 1 << 20;
constexpr std::size_t kMaxParts = 16;
// A receive buffer is checked and re-hashed in blocks of this size: small, so that after a few
// changed lines only their blocks are hashed again.
constexpr std::size_t kHashBlock = 1 << 10;
// auto: a writer whose compare found more than AutoTiming::kCrossover of the lines changed, or
// whose calls as lines are slower (AutoTiming, DeltaAuto.h), sends the next calls the usual way:
// 1, then twice as many after each time it finds so, up to kMaxRingCalls. Then it probes, still
// sending by ring: it hashes a sample of its buffer's KiB blocks in two calls and counts those
// that changed between them; at most kProbeBlockShare of them sends it back through its mirror
// (whole once, then compared), else to more calls by ring. (Lines changed at random, 5% of them
// touch about half the blocks.) The crossover: docs/benchmarks.md, "Delta publish".
constexpr double kProbeBlockShare = 0.5;
// A probe hashes every kProbeStride-th block only (the same ones in both calls): the share of
// blocks that changed is estimated, for a sixteenth of the reading (64 MiB: 4,096 blocks).
constexpr std::size_t kProbeStride = 16;
constexpr int kMaxRingCalls = 64;
// Mirrors a rank keeps (least recently used dropped first), and receive buffers it tracks.
constexpr std::size_t kMaxMirrors = 8;
constexpr std::size_t kMaxHeld = 2 * kMaxRanks;

constexpr std::size_t lineCount(std::size_t bytes) { return (bytes + kCacheLine - 1) / kCacheLine; }
constexpr std::size_t roundUp(std::size_t v, std::size_t to) { return (v + to - 1) / to * to; }
// A mirror: the data (whole lines), then the change bits, one 64-bit word per 64 lines.
constexpr std::size_t kWordBytes = 64 * kCacheLine;  // the data one word of bits covers
std::size_t bitsOffset(std::size_t bytes) { return roundUp(lineCount(bytes) * kCacheLine, kWordBytes); }
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

// A buffer of `bytes` is hashed in blockCount(bytes) blocks of kHashBlock, the last one shorter.
std::size_t blockCount(std::size_t bytes) { return (bytes + kHashBlock - 1) / kHashBlock; }
std::uint64_t hashOfBlock(const std::byte* p, std::size_t bytes, std::size_t block) {
  const std::size_t at = block * kHashBlock;
  return hashBlock(p + at, std::min(kHashBlock, bytes - at));
}
// The hashes of the blocks that [from, to) of the buffer touches, again.
void hashBlocks(const std::byte* p, std::size_t bytes, std::size_t from, std::size_t to, std::vector<std::uint64_t>* hashes) {
  for (std::size_t b = from / kHashBlock; b < blockCount(to); ++b) (*hashes)[b] = hashOfBlock(p, bytes, b);
}

// The change bits' words (one per 64 lines) that [from, to) of the data touches: [first, end).
struct Words {
  std::size_t first, end;
};
Words wordsOf(std::size_t from, std::size_t to) { return {from / kWordBytes, (to + kWordBytes - 1) / kWordBytes}; }

// dst = src over [from, to) of buffers of `bytes`, and the hash of each of dst's blocks there, a
// stretch at a time: the hash reads it from the cache. `from` is a whole block.
void copyAndHash(std::byte* dst, const std::byte* src, std::size_t from, std::size_t to, std::size_t bytes,
                 std::vector<std::uint64_t>* hashes) {
  constexpr std::size_t kStretch = 64 * kHashBlock;
  for (std::size_t at = from; at < to; at += kStretch) {
    const std::size_t len = std::min(kStretch, to - at);
    std::memcpy(dst + at, src + at, len);
    hashBlocks(dst, bytes, at, at + len, hashes);
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
  std::uint64_t generation = 0;       // 0: its data is not what readers were last sent
  int ringCallsLeft = 0;              // auto: calls still to send by ring before a probe
  int ringCalls = 1;                  // auto: how many the next finding of most lines changed sets
  int probe = 0;                      // auto: 1: the next call hashes; 2: the next counts changed blocks
  std::vector<std::uint64_t> hashes;  // per kHashBlock of the data
  DeltaAnnouncement pending;          // this call's, between prepare() and finishPublish()
  double share = 0;                   // of lines the last compare found changed
  AutoTiming timing;                  // auto: what calls each way take
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

std::size_t deltaPartBytes(std::size_t bytes) { return std::max(kMinPartBytes, roundUp(bytes / kMaxParts + 1, kWordBytes)); }

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

// The blocks of [from, to) of the buffer whose hash differs from the mirror's are compared with
// it line by line; their changed lines go into the mirror (published one by one) and their bits
// are set. The rest of the mirror is never read: the buffer is hashed where it lies, in local
// memory. Blocks are hashed a group ahead of the compare, and the differing ones' mirror lines
// prefetched meanwhile: they lie scattered, and each would otherwise wait for memory.
void DeltaState::compareInto(Mirror& m, const std::byte* src, std::size_t from, std::size_t to) {
  const RegionView& view = *m.view;
  std::byte* data = view.at(0);
  auto* bits = reinterpret_cast<std::uint64_t*>(view.at(bitsOffset(m.bytes)));
  const Words words = wordsOf(from, to);
  std::memset(bits + words.first, 0, (words.end - words.first) * 8);
  const std::size_t lines = lineCount(m.bytes);
  const std::size_t firstBlock = from / kHashBlock, endBlock = blockCount(to);
  constexpr std::size_t kLinesABlock = kHashBlock / kCacheLine, kGroup = 16;
  std::size_t changed = 0, blocksRead = 0;
  std::vector<std::size_t> differ[2];
  auto hashGroup = [&](std::size_t first, std::vector<std::size_t>* out) {
    out->clear();
    for (std::size_t block = first; block < std::min(endBlock, first + kGroup); ++block) {
      const std::uint64_t hash = hashOfBlock(src, m.bytes, block);
      if (hash == m.hashes[block]) continue;
      const std::size_t at = block * kHashBlock;
      m.hashes[block] = hash;
      out->push_back(block);
      for (std::size_t l = 0; l < kLinesABlock; ++l) __builtin_prefetch(data + at + l * kCacheLine, 1);
    }
  };
  hashGroup(firstBlock, &differ[0]);
  for (std::size_t group = firstBlock, k = 0; group < endBlock; group += kGroup, k ^= 1) {
    hashGroup(group + kGroup, &differ[k ^ 1]);
    for (std::size_t block : differ[k]) {
      ++blocksRead;
      for (std::size_t l = block * kLinesABlock; l < std::min(lines, (block + 1) * kLinesABlock); ++l) {
        const std::size_t at = l * kCacheLine, n = std::min(kCacheLine, m.bytes - at);
        if (n == kCacheLine ? sameLine(data + at, src + at) : std::memcmp(data + at, src + at, n) == 0) continue;
        std::memcpy(data + at, src + at, n);
        view.publish(at, n);
        bits[l / 64] |= 1ull << (l % 64);
        ++changed;
      }
    }
  }
  view.publish(bitsOffset(m.bytes) + words.first * 8, (words.end - words.first) * 8);
  counters_.linesCompared += std::min(lines, words.end * 64) - words.first * 64;
  counters_.linesChanged += changed;
  changedThisCall_ += changed;
  // From the pool: the blocks of the mirror compared; into it: the changed lines and the bits.
  comm_.traffic().read += std::min(to - from, blocksRead * kHashBlock);
  comm_.traffic().written += changed * kCacheLine + (words.end - words.first) * 8;
}

Status DeltaState::prepare(int kind, const void* src, std::size_t bytes, bool onGpu, DeltaAnnouncement* out) {
  *out = DeltaAnnouncement{};
  ++counters_.calls;
  Mirror* m = nullptr;
  if (!onGpu) {
    Status made = mirrorFor(kind, src, bytes, &m);
    if (!made.ok() && !loggedNoRoom_) {
      loggedNoRoom_ = true;
      warn("delta publish: no mirror of ", bytes, " bytes in the pool (", made.message, "): blocks go the usual way until one fits");
    }
  }
  calling_ = m;
  callStart_ = std::chrono::steady_clock::now();
  if (m == nullptr || m->ringCallsLeft > 0 || m->probe != 0) {
    if (m != nullptr) {
      m->generation = 0;  // the readers get this call's data by ring, not from the mirror
      sendingByRing(*m, static_cast<const std::byte*>(src));
    }
    ++counters_.ringPublishes;
    out->mode = static_cast<std::uint64_t>(DeltaSend::ring);
    callSend_ = DeltaSend::ring;
    return Status::success();
  }
  out->ref = m->region.offset + 1;
  out->regionBytes = m->region.bytes;
  out->mirror = m->id;
  out->previous = m->generation;
  out->generation = nextGeneration_++;
  // No generation while the mirror changes: a call that fails half way leaves no reader
  // believing it holds what the mirror holds.
  m->generation = 0;
  writing_ = m;
  changedThisCall_ = 0;
  if (out->previous == 0) {
    m->hashes.assign(blockCount(bytes), 0);
    ++counters_.fullPublishes;
    out->mode = static_cast<std::uint64_t>(DeltaSend::full);
  } else {
    ++counters_.linePublishes;
    out->mode = static_cast<std::uint64_t>(DeltaSend::lines);
  }
  m->pending = *out;
  callSend_ = static_cast<DeltaSend>(out->mode);
  return Status::success();
}

void DeltaState::backOff(Mirror& m) {
  m.ringCallsLeft = m.ringCalls;
  m.ringCalls = std::min(2 * m.ringCalls, kMaxRingCalls);
}

// A call of a writer in auto that sends by ring: counts down to the probe, and probes.
void DeltaState::sendingByRing(Mirror& m, const std::byte* src) {
  if (m.ringCallsLeft > 0) {
    if (--m.ringCallsLeft == 0) m.probe = 1;
    return;
  }
  const std::size_t blocks = blockCount(m.bytes);
  m.hashes.resize(blocks);
  std::size_t changed = 0, sampled = 0;
  for (std::size_t b = 0; b < blocks; b += kProbeStride, ++sampled) {
    const std::uint64_t hash = hashOfBlock(src, m.bytes, b);
    changed += hash != m.hashes[b] ? 1 : 0;
    m.hashes[b] = hash;
  }
  if (m.probe == 1) {
    m.probe = 2;
    return;
  }
  m.probe = 0;
  // Few blocks changed: the next call goes through the mirror (whole: its generation is 0, and
  // it hashes every block again).
  if (static_cast<double>(changed) > kProbeBlockShare * static_cast<double>(sampled)) backOff(m);
}

void DeltaState::publishPart(const void* src, std::size_t from, std::size_t to) {
  Mirror& m = *writing_;
  const auto* data = static_cast<const std::byte*>(src);
  if (m.pending.mode == static_cast<std::uint64_t>(DeltaSend::lines)) return compareInto(m, data, from, to);
  copyAndHash(m.view->at(0), data, from, to, m.bytes, &m.hashes);
  m.view->publish(from, to - from);
  comm_.traffic().written += to - from;
}

void DeltaState::finishPublish() {
  Mirror& m = *writing_;
  const bool compared = m.pending.mode == static_cast<std::uint64_t>(DeltaSend::lines);
  // A whole copy leaves the share unknown: the next call compares.
  m.share = compared ? static_cast<double>(changedThisCall_) / static_cast<double>(lineCount(m.bytes)) : 0;
  m.generation = m.pending.generation;
  writing_ = nullptr;
}

void DeltaState::finishCall() {
  if (calling_ == nullptr) return;
  Mirror& m = *calling_;
  calling_ = nullptr;
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - callStart_).count();
  const AutoStep step = m.timing.after(callSend_, seconds, m.share, comm_.options().deltaTimed);
  if (mode_ != DeltaMode::automatic || callSend_ != DeltaSend::lines) return;
  if (step == AutoStep::backOff)
    backOff(m);
  else if (step == AutoStep::timeRing)
    m.ringCallsLeft = 1;  // calls by ring to time them (this one, untimed, then the probe's two)
  else
    m.ringCalls = 1;
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
    if (hashOfBlock(p, bytes, b) != h->hashes[b]) return false;
  }
  return true;
}

void DeltaState::forget(int writer, const void* dst, std::size_t bytes) {
  if (Held* h = heldFor(writer, dst, bytes, false)) h->generation = 0;
}

Status DeltaState::viewOf(int writer, const DeltaAnnouncement& a, RegionView** out) {
  for (auto it = seen_.begin(); it != seen_.end(); ++it) {
    if (it->writer == writer && it->mirror == a.mirror) {
      seen_.splice(seen_.begin(), seen_, it);
      *out = seen_.front().view.get();
      return Status::success();
    }
  }
  if (a.ref == 0 || a.ref - 1 > comm_.pool().bytes() || a.regionBytes > comm_.pool().bytes() - (a.ref - 1))
    return Status::error(cxlcclInternalError, comm_.describeRank(writer), " announced a mirror at offset ", a.ref - 1, " (", a.regionBytes,
                         " bytes) that ends beyond the pool's ", comm_.pool().bytes(), " bytes");
  seen_.push_front(
      Seen{writer, a.mirror, std::make_unique<RegionView>(comm_.pool().base() + (a.ref - 1), a.regionBytes, comm_.view().mode())});
  if (seen_.size() > kMaxMirrors * static_cast<std::size_t>(comm_.nranks())) seen_.pop_back();
  *out = seen_.front().view.get();
  return Status::success();
}

Status DeltaState::beginApply(int writer, const DeltaAnnouncement& a, void* dst, std::size_t bytes, bool intact, bool onGpu,
                              Receiving* out) {
  ++counters_.calls;
  *out = Receiving{};
  out->send = static_cast<DeltaSend>(a.mode);
  if (out->send == DeltaSend::ring) {
    forget(writer, dst, bytes);
    return Status::success();
  }
  if (out->send != DeltaSend::full && out->send != DeltaSend::lines)
    return Status::error(cxlcclInternalError, comm_.describeRank(writer), " announced delta mode ", a.mode);
  if (a.regionBytes < bitsOffset(bytes) + bitsBytes(bytes))
    return Status::error(cxlcclInvalidUsage, comm_.describeRank(writer), " announced a mirror of ", a.regionBytes, " bytes for a block of ",
                         bytes, ": the ranks called with different sizes");
  CXLCCL_TRY(viewOf(writer, a, &out->view));
  out->onGpu = onGpu;
  out->held = onGpu ? nullptr : heldFor(writer, dst, bytes, true);
  out->dst = static_cast<std::byte*>(dst);
  out->bytes = bytes;
  out->mirror = a.mirror;
  out->generation = a.generation;
  Held* h = out->held;
  out->lines = out->send == DeltaSend::lines && intact && h != nullptr && h->mirror == a.mirror && h->generation == a.previous;
  if (h != nullptr) {
    h->generation = 0;  // until this call's data is all there
    h->hashes.resize(blockCount(bytes));
  }
  if (out->lines) {
    ++counters_.lineApplies;
  } else {
    ++counters_.fullApplies;
    if (out->send == DeltaSend::lines) ++counters_.fallbacks;
  }
  return Status::success();
}

Status DeltaState::applyPart(Receiving& r, Operation& op, std::size_t from, std::size_t to) {
  if (r.send == DeltaSend::ring) return Status::success();
  RegionView& view = *r.view;
  const std::byte* data = view.at(0);
  std::byte* out = r.dst;
  const std::size_t bytes = r.bytes;
  if (!r.lines) {
    view.refresh(from, to - from);
    if (r.onGpu)
      CXLCCL_TRY(op.copyNow(out + from, data + from, to - from));
    else
      copyAndHash(out, data, from, to, bytes, &r.held->hashes);
    comm_.traffic().read += to - from;
    return Status::success();
  }
  const auto [firstWord, endWord] = wordsOf(from, to);
  view.refresh(bitsOffset(bytes) + firstWord * 8, (endWord - firstWord) * 8);
  const auto* bits = reinterpret_cast<const std::uint64_t*>(view.at(bitsOffset(bytes)));
  std::size_t copied = 0;
  // The changed lines of a group of words are prefetched (from the mirror, and their blocks of
  // the buffer, which are hashed again) while the group before is copied.
  constexpr std::size_t kGroupWords = 4;
  auto prefetchGroup = [&](std::size_t first) {
    for (std::size_t word = first; word < std::min(endWord, first + kGroupWords); ++word) {
      for (std::uint64_t set = bits[word]; set != 0; set &= set - 1) {
        const std::size_t at = (word * 64 + static_cast<std::size_t>(__builtin_ctzll(set))) * kCacheLine;
        __builtin_prefetch(data + at, 0);
        const std::size_t block = at / kHashBlock * kHashBlock;
        for (std::size_t l = block; l < std::min(bytes, block + kHashBlock); l += kCacheLine) __builtin_prefetch(out + l, 1);
      }
    }
  };
  prefetchGroup(firstWord);
  for (std::size_t word = firstWord; word < endWord; ++word) {
    if ((word - firstWord) % kGroupWords == 0) prefetchGroup(word + kGroupWords);
    std::uint64_t set = bits[word];
    while (set != 0) {
      // A run of changed lines: refreshed, copied, and its blocks hashed again.
      const int first = __builtin_ctzll(set);
      const std::uint64_t rest = set >> first;
      const int count = ~rest == 0 ? 64 : __builtin_ctzll(~rest);
      set &= count == 64 ? 0 : ~(((1ull << count) - 1) << first);
      const std::size_t at = (word * 64 + static_cast<std::size_t>(first)) * kCacheLine;
      const std::size_t len = std::min(static_cast<std::size_t>(count) * kCacheLine, bytes - at);
      view.refresh(at, len);
      std::memcpy(out + at, data + at, len);
      copied += len;
      hashBlocks(out, bytes, at, at + len, &r.held->hashes);
    }
  }
  comm_.traffic().read += (endWord - firstWord) * 8 + copied;
  return Status::success();
}

void DeltaState::finishApply(Receiving& r) {
  if (r.held == nullptr || r.send == DeltaSend::ring) return;
  r.held->mirror = r.mirror;
  r.held->generation = r.generation;
}

}  // namespace cxlccl
