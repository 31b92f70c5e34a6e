#pragma once
// One call's work, planned then run. Planning is the same on every rank: for every writer, the
// pieces it publishes in order, each cut into chunks (chunkSize()) that take the ring's next
// sequence numbers; so every rank knows which sequence of which ring carries what, with nothing
// exchanged. Running makes progress on all of this rank's pieces at once (publish a
// chunk when its slot was read by all its readers, copy or reduce a chunk out when its slot
// header says it is there), so rings never deadlock and publishing overlaps reading.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "Comm.h"
#include "Gpu.h"
#include "Wait.h"

namespace cxlccl {

// A slot header's ref, or an announced address (Gather), with this bit: the rest is an address
// in the writer's (announcer's) process, for a peer on its host to read (write) directly. User
// addresses never have it; pool offsets are far below it.
inline constexpr std::uint64_t kDirectRef = 1ull << 63;

// The reader mask of a piece that every rank of `nranks` but `rank` reads.
inline std::uint64_t everyoneBut(int nranks, int rank) {
  const std::uint64_t all = nranks == 64 ? ~0ull : (1ull << nranks) - 1;
  return all & ~(1ull << rank);
}

class Operation {
 public:
  explicit Operation(Comm& comm);

  // Starts planning a call whose pieces carry `op` and `hash` (checked by readers: ranks that
  // disagree on a call's arguments get an error, not wrong data).
  void begin(std::uint64_t op, std::uint64_t hash);
  void setReduction(cxlcclDataType_t type, cxlcclRedOp_t redOp);
  // Point to point: the pieces planned next carry this message index and hash.
  void tag(std::uint64_t op, std::uint64_t hash) {
    op_ = op;
    hash_ = hash;
  }

  // Plans `writer`'s next piece of `bytes` on ring `c`, read by the ranks in `readers`. This rank
  // publishes it from `src` when it is the writer, copies it to `dst` when it is a reader and
  // `dst` is set; returns the piece's index for combine() otherwise.
  struct PieceRef {
    Channel channel;
    std::uint64_t firstSeq = 0;
    std::uint64_t op = 0;
    std::uint64_t hash = 0;
  };
  PieceRef piece(Channel c, std::size_t bytes, std::uint64_t readers, const void* src, void* dst);
  // Like piece() for this rank as writer, publishing each chunk only once combine number
  // `combineIndex` has produced it.
  void publishCombined(Channel c, std::size_t bytes, std::uint64_t readers, const void* src, int combineIndex);
  // dst = inputs[0] op inputs[1] op ... in rank order; an input is a local buffer or a piece.
  struct Input {
    const std::byte* local = nullptr;
    PieceRef piece;
  };
  int combine(void* dst, std::size_t bytes, const Input* inputs, std::size_t count);
  // `count` cleared inputs to fill for combine(), reused from call to call (a small call must
  // not clear kMaxRanks of them).
  Input* inputsFor(std::size_t count) {
    inputScratch_.assign(count, Input{});
    return inputScratch_.data();
  }
  // A copy inside this rank, done while waiting for peers -- or at once when small (from host
  // memory: not worth a step of run()).
  void copy(void* dst, const void* src, std::size_t bytes);
  // Copies that read or write the caller's buffers go through `gpu` on `stream` (device
  // buffers) until set back to nullptr; begin() keeps the setting.
  void setGpu(const GpuContext* gpu, cudaStream_t stream) {
    gpu_ = gpu;
    stream_ = stream;
  }
  bool onGpu() const { return gpu_ != nullptr; }
  // Pieces of a few slots planned from now on until begin() go in finer chunks (chunkSize()):
  // for a root that reads from every rank (Gather, Reduce), so it starts sooner, and for readers
  // of one writer (Broadcast, Scatter) or of every writer (AllGather, AllToAll), so that they
  // copy out while it copies in.
  void cutFiner() { finerChunks_ = true; }
  // Whether send buffers in the pool are published where they lie (default) or copied.
  void publishInPlace(bool allowed) { inPlaceAllowed_ = allowed; }
  // Pieces planned from now on until begin() may be read directly from their writer's buffer
  // where all their readers read the writer so (DirectReads): for collectives whose readers
  // copy pieces out (never combine them), and measured to gain: AllGather, AllToAll, Broadcast,
  // Scatter and Send/Recv in a group (only where send buffers may be published where they lie:
  // publishInPlace); not Gather, whose root would read every peer's block itself and bounds the
  // call (slower read directly: docs/benchmarks.md) -- its peers write into the root instead
  // (mayWriteDirectlyTo).
  void allowDirectReads() { readDirect_ = true; }
  // A copy of the caller's buffers made at once, the same way.
  Status copyNow(void* dst, const void* src, std::size_t bytes);

  // Pool offset + 1 of [p, p + bytes) when it lies in a buffer of this communicator's pool and
  // may be used where it lies (host memory, a mode that shares buffers: not simulate); else 0.
  std::uint64_t poolRef(const void* p, std::size_t bytes) const;
  // Copies `bytes` from `src` into another rank's pool buffer, at pool offset ref - 1 + offset,
  // written back to memory when the pool has no coherence.
  Status pushToPool(std::uint64_t ref, std::size_t offset, const void* src, std::size_t bytes);
  // dst = the pool buffers at srcRefs[0] - 1 + offset, srcRefs[1] - 1 + offset, ... combined in
  // that order with the call's operator (setReduction), `bytes` of them, into another rank's pool
  // buffer at dstRef - 1 + offset; without coherence the inputs are invalidated first and the
  // result written back. Safe where the destination is one of the inputs (in place).
  Status reduceInPool(std::uint64_t dstRef, const std::vector<std::uint64_t>& srcRefs, std::size_t offset, std::size_t bytes);
  // This rank's own pool buffer [p, p + bytes), which other ranks are about to read or write
  // (before) or have written (after): without coherence, its lines are written back first, so
  // that they read it and no dirty line of this rank lands on their data later, and dropped
  // after, so that loads read theirs.
  void beforePeersUse(const void* p, std::size_t bytes) const;
  void afterPeersWrote(const void* p, std::size_t bytes) const;
  // Whether every other rank may write blocks of `bytes` straight into `target`'s buffers: each
  // reads `target` directly (the same permission, and the verdict that it pays), the block is
  // not small, and rank lines hold `field::writing` (Comm::linesHoldWriting).
  bool mayWriteDirectlyTo(int target, std::size_t bytes) const;
  // This rank's [src, src + bytes) into `target`'s process at `address` (which `target`
  // announced in this call), a chunk at a time (as a piece read directly is cut), each after checking that `target` has not failed
  // a call since (its caller may reuse the buffer then); this rank's `writing` says so meanwhile.
  Status writeDirect(int target, std::uintptr_t address, const void* src, std::size_t bytes);
  std::uint64_t index() const { return op_; }  // the call's op index (begin())

  Status run();

 private:
  enum class Step { moved, blocked, failed };
  struct Publish {
    std::uint64_t op;
    std::uint64_t hash;
    Channel c;
    const std::byte* src;
    std::size_t bytes;
    std::uint64_t readers;
    std::uint64_t firstSeq;
    std::uint64_t chunks;
    std::uint64_t done;
    int readyCombine;
    std::uint64_t ref;   // 1 + the pool offset of `src` when it is a pool buffer (PoolBuffers.h)
    bool plannedDirect;  // chunked as a piece read directly (on every rank alike: plannedDirect())
    std::size_t staged;  // a device buffer's: where in gpuStaging_ its chunks are copied to be read (else kNotStaged)
    // Its chunks' addresses are published, for its readers to read directly (a pool buffer's
    // offsets instead: read where it lies).
    bool readDirectly() const { return plannedDirect && ref == 0; }
  };
  static constexpr std::size_t kNotStaged = ~std::size_t{0};
  struct Fetch {
    std::uint64_t op;
    std::uint64_t hash;
    Channel c;
    std::byte* dst;
    std::size_t bytes;
    std::uint64_t firstSeq;
    std::uint64_t chunks;
    std::uint64_t done;
    bool plannedDirect;  // chunked so (its writer may still publish it otherwise: a buffer in the pool or on a GPU)
  };
  struct Combine {
    std::byte* dst;
    std::size_t bytes;
    std::size_t firstInput;
    std::size_t inputCount;
    std::uint64_t chunks;
    std::uint64_t done;
    std::size_t doneBytes;
  };
  struct Copy {
    std::byte* dst;
    const std::byte* src;
    std::size_t bytes;
    std::size_t done;
  };
  struct Range {
    std::uint64_t next;
    std::uint64_t last;
  };
  // The sequences this rank consumes on one ring, in order (a ring is read strictly in order).
  struct Cursor {
    std::vector<Range> ranges;
    std::size_t head = 0;
  };

  // A piece of `bytes` on ring `c` goes in chunks of its slot size -- or, with finer chunks and
  // when it fills fewer than kPipelineChunks slots, in about kPipelineChunks chunks (of at least
  // kMinChunk), so that its readers start on the first while the rest is written -- except one
  // planned to be read directly, which has no copy in to overlap and needs no slot: it goes in
  // chunks of kDirectChunk (or a slot where slots are larger), each a system call and a round
  // trip of flags fewer than in slot-sized chunks (2 ranks, 1-64 MiB: up to 1.11x faster, the
  // medians of three pairs; docs/benchmarks.md, "session 44"). The same on every rank.
  static constexpr std::size_t kPipelineChunks = 4;
  static constexpr std::size_t kMinChunk = 64 << 10;
  static constexpr std::size_t kDirectChunk = 2 << 20;
  std::size_t chunkSize(Channel c, std::size_t bytes, bool direct = false) const;
  std::uint64_t chunksOf(Channel c, std::size_t bytes, bool direct = false) const;
  std::size_t chunkOffset(Channel c, std::size_t bytes, std::uint64_t k, bool direct = false) const;  // of chunk k
  std::size_t chunkBytes(Channel c, std::size_t bytes, std::uint64_t k, bool direct = false) const;
  // Whether `writer`'s piece of `bytes` for `readers` is planned to be read directly.
  bool plannedDirect(int writer, std::size_t bytes, std::uint64_t readers) const;
  void expect(Channel c, std::uint64_t first, std::uint64_t chunks);
  // A chunk's data; for one its writer published to be read directly, its address in the
  // writer (*direct set; a combine, which passes none, fails on it).
  Step ready(const PieceRef& piece, std::uint64_t k, std::size_t bytes, const std::byte** data, bool* direct = nullptr);
  void consumed(Channel c, std::uint64_t seq);
  Step stepPublish(Publish& t);
  Step stepFetch(Fetch& t);
  Step stepCombine(Combine& t);
  Step stepCopy(Copy& t);
  // Whether this rank still publishes from [p, p + bytes): a combine must not write it yet. (A
  // piece published where it lies, read by peers later, must not lie where a combine writes.)
  bool publishingFrom(const std::byte* p, std::size_t bytes) const;
  // copyNow(), its failure kept in status_ (false).
  bool moveUser(void* dst, const void* src, std::size_t bytes);
  // A chunk of `writer`'s read from `src` in its memory into dst (DirectReads), its failure kept
  // in status_ (false).
  bool readChunkDirect(int writer, void* dst, const void* src, std::size_t bytes);
  // What a direct read or write of `peer`'s memory that returned `st` comes to: an error where
  // `peer` failed a call or left meanwhile, or where `st` failed, said as "while this rank
  // <acted> directly" or "<acting> rank P directly: ..."; `st` otherwise.
  Status directOutcome(int peer, const Status& st, const char* acted, const char* acting);
  // A bulk copy into or out of the pool or inside this rank: through the GPU for device buffers
  // (like moveUser), else shared by the copy crew (`streaming`: non-temporal stores).
  bool moveBulk(void* dst, const void* src, std::size_t bytes, bool streaming);
  // The pool's bytes [ref - 1 + offset, + bytes), checked to lie inside it (another rank said where).
  Status inPool(std::uint64_t ref, std::size_t offset, std::size_t bytes, std::byte** out) const;
  // dst = in[0] op in[1] op ... op in[inputs - 1], `bytes` of the call's type (setReduction);
  // right where dst is also one of the inputs.
  void reduceInOrder(std::byte* dst, const std::byte* const* in, std::size_t inputs, std::size_t bytes);
  Step mismatch(const PieceRef& piece, const char* what);

  Comm& comm_;
  std::uint64_t op_ = 0;
  std::uint64_t hash_ = 0;
  cxlcclDataType_t type_ = cxlcclUint8;
  cxlcclRedOp_t redOp_ = cxlcclSum;
  std::size_t typeBytes_ = 1;
  std::vector<Publish> publishes_;
  std::vector<Fetch> fetches_;
  std::vector<Combine> combines_;
  std::vector<Input> inputs_;
  std::vector<Input> inputScratch_;
  std::vector<Copy> copies_;
  std::vector<std::byte> directScratch_;  // a chunk read directly on its way to device memory
  std::vector<std::byte> gpuStaging_;     // device buffers' pieces published to be read directly (Publish::staged)
  std::size_t gpuStagingBytes_ = 0;       // what this call's pieces need of it
  std::vector<Cursor> cursors_;
  std::vector<int> touched_;
  std::uint64_t waitMask_ = 0;
  std::uint64_t blockedPolls_ = 0;  // chunks found not yet published
  Status status_;
  const GpuContext* gpu_ = nullptr;
  bool inPlaceAllowed_ = true;
  bool finerChunks_ = false;
  bool readDirect_ = false;
  bool loggedInPlace_ = false;  // the first piece published where it lies is logged
  cudaStream_t stream_ = nullptr;
};

}  // namespace cxlccl
