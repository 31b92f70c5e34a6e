#include "Collectives.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "CacheLines.h"
#include "Reduce.h"

namespace cxlccl {
namespace {

std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdull;
}

const std::byte* bytesAt(const void* base, std::size_t offset) { return static_cast<const std::byte*>(base) + offset; }
std::byte* bytesAt(void* base, std::size_t offset) { return static_cast<std::byte*>(base) + offset; }

// AllReduce cuts the vector into nranks blocks of whole elements, the first `count % nranks` one
// element longer.
struct Blocks {
  std::size_t count, nranks, typeBytes;
  std::size_t elements(std::size_t r) const { return count / nranks + (r < count % nranks ? 1 : 0); }
  std::size_t offset(std::size_t r) const { return (r * (count / nranks) + std::min(r, count % nranks)) * typeBytes; }
  std::size_t bytes(std::size_t r) const { return elements(r) * typeBytes; }
};

// Blocks from this size on are gathered by pushing them into a root buffer in the pool.
constexpr std::size_t kPushBlockBytes = 32 << 10;

using Rooted = Comm::Rooted;

// Where a root's receive buffer of `recvBytes` lies for gatherPushed or reducePushed (pool offset
// + 1), or 0 when it cannot be pushed into: not in the pool, or its blocks of `blockBytes` not
// whole lines (one writer a line).
std::uint64_t pushTarget(const Operation& op, void* recv, std::size_t recvBytes, std::size_t blockBytes) {
  const std::uint64_t ref = op.poolRef(recv, recvBytes);
  return ref != 0 && (ref - 1) % kCacheLine == 0 && blockBytes % kCacheLine == 0 ? ref : 0;
}

// The root of a pulled Gather or Reduce tells every rank, beside the data, whether its buffer
// could have been pushed into (Comm::pushable), so that the next such call to it asks first.
// `target` must live until the operation has run.
void tellPushable(Operation& op, int me, int n, int root, std::uint64_t* target, std::uint64_t rootsTarget) {
  if (me == root) *target = rootsTarget;
  op.piece(Channel{root, -1}, sizeof *target, everyoneBut(n, root), target, me == root ? nullptr : target);
}

// Gather straight into the root's buffer: where it lies in the pool (cxlcclMemAlloc), or, where
// every peer may write into the root directly (Operation::mayWriteDirectlyTo, `direct`), where
// it lies in the root's process. The root announces where; every other rank copies its block
// there at once and says so, while the root copies its own. One copy a block, made by all ranks
// at once, where the pulled gather makes two and leaves all the reading to the root (2 ranks,
// 256 KiB-4 MiB written directly: docs/benchmarks.md, "session 44"). The announcement is a round
// trip before any data moves, so it is made only where the root's buffer lay in the pool at the
// last Gather to it (Comm::pushable) or peers may write into the root. `pushed` false: the
// root's buffer is not usable so (not in the pool and not written directly, not line-aligned, a
// GPU stream); nothing moved but the announcement.
Status gatherPushed(Comm& comm, Operation& op, const CallArgs& a, std::size_t bytes, std::uint64_t hash, bool direct, bool* pushed) {
  const int n = comm.nranks(), me = comm.rank(), root = a.root;
  const std::size_t total = bytes * static_cast<std::size_t>(n);
  auto eachPeerBlock = [&](auto&& f) {
    f(a.recv, static_cast<std::size_t>(root) * bytes);
    f(bytesAt(a.recv, static_cast<std::size_t>(root + 1) * bytes), total - static_cast<std::size_t>(root + 1) * bytes);
  };
  std::uint64_t announced = 0, where = 0;
  if (me == root) {
    announced = pushTarget(op, a.recv, total, bytes);
    if (announced != 0) {
      eachPeerBlock([&](const void* p, std::size_t b) { op.beforePeersUse(p, b); });
    } else if (direct && !op.onGpu()) {
      announced = kDirectRef | reinterpret_cast<std::uintptr_t>(a.recv);
    }
  }
  op.piece(Channel{root, -1}, sizeof announced, everyoneBut(n, root), &announced, &where);
  CXLCCL_TRY(op.run());
  if (me == root) where = announced;
  const bool intoProcess = (where & kDirectRef) != 0;
  *pushed = where != 0;
  comm.pushable(Rooted::gather, root) = *pushed && !intoProcess;
  if (!*pushed) return Status::success();

  op.begin(comm.nextOp(), hash);
  if (me != root) {
    const std::size_t at = static_cast<std::size_t>(me) * bytes;
    CXLCCL_TRY(intoProcess ? op.writeDirect(root, static_cast<std::uintptr_t>(where & ~kDirectRef) + at, a.send, bytes)
                           : op.pushToPool(where, at, a.send, bytes));
  }
  static const std::uint64_t kPushed = 1;
  std::vector<std::uint64_t> told(static_cast<std::size_t>(n));
  for (int w = 0; w < n; ++w)
    if (w != root)
      op.piece(Channel{w, -1}, sizeof kPushed, 1ull << root, &kPushed, me == root ? &told[static_cast<std::size_t>(w)] : nullptr);
  if (me == root) op.copy(bytesAt(a.recv, static_cast<std::size_t>(me) * bytes), a.send, bytes);
  const Status ran = op.run();
  if (!ran.ok() && me == root && intoProcess) {
    // Peers may still write into the buffer; the caller may reuse it once this call returns.
    comm.fail(ran);
    comm.awaitWriters(op.index(), std::chrono::milliseconds(comm.options().heartbeatTimeoutMs));
  }
  CXLCCL_TRY(ran);
  if (me == root && !intoProcess) eachPeerBlock([&](const void* p, std::size_t b) { op.afterPeersWrote(p, b); });
  return Status::success();
}

// The pulled gather: every other rank publishes its block on its ring and the root reads them.
// With `tell`, the root also tells whether its buffer could have been pushed into (tellPushable).
Status gatherPulled(Comm& comm, Operation& op, const CallArgs& a, std::size_t bytes, bool tell) {
  const int n = comm.nranks(), me = comm.rank(), root = a.root;
  op.cutFiner();
  for (int w = 0; w < n; ++w) {
    if (w != root) op.piece(Channel{w, -1}, bytes, 1ull << root, a.send, me == root ? bytesAt(a.recv, w * bytes) : nullptr);
  }
  std::uint64_t target = 0;
  if (tell) tellPushable(op, me, n, root, &target, me == root ? pushTarget(op, a.recv, bytes * static_cast<std::size_t>(n), bytes) : 0);
  if (me == root) op.copy(bytesAt(a.recv, me * bytes), a.send, bytes);
  CXLCCL_TRY(op.run());
  if (tell) comm.pushable(Rooted::gather, root) = target != 0;
  return Status::success();
}

// AllReduce up to this size runs in one phase (every rank reduces every vector).
constexpr std::size_t kOnePhaseAllReduceBytes = 16 << 10;

// Vectors from this size on are reduced in the pool when every buffer involved lies there.
constexpr std::size_t kPushReduceBytes = 256 << 10;

// Reduce with every rank's send buffer and the root's receive buffer in the pool: every rank
// reduces its share of the vector (whole lines of the result) from all send buffers where they
// lie, straight into the root's buffer -- each does 1/n of the work the pulled reduce leaves to
// the root. All ranks first tell each other where their buffers lie -- an exchange before any
// data moves, so it is made only where the root's buffer lay in the pool at the last Reduce to it
// (Comm::pushable; made every time, 2 ranks, 256 KiB-2 MiB: 1.15-1.3x as long a call) -- and a last
// exchange keeps every send buffer untouched until all ranks have read it. `pushed` false: some
// buffer is not in the pool (or not line-aligned); nothing moved but the addresses.
Status reducePushed(Comm& comm, Operation& op, const CallArgs& a, std::size_t bytes, std::uint64_t hash, bool* pushed) {
  const int n = comm.nranks(), me = comm.rank(), root = a.root;
  struct Where {
    std::uint64_t send = 0, recv = 0;
  };
  Where mine;
  mine.send = op.poolRef(a.send, bytes);
  if (me == root) mine.recv = pushTarget(op, a.recv, bytes, bytes);
  if (mine.send != 0) op.beforePeersUse(a.send, bytes);
  if (mine.recv != 0) op.beforePeersUse(a.recv, bytes);
  std::vector<Where> all(static_cast<std::size_t>(n));
  all[static_cast<std::size_t>(me)] = mine;
  for (int w = 0; w < n; ++w)
    op.piece(Channel{w, -1}, sizeof(Where), everyoneBut(n, w), &mine, w == me ? nullptr : &all[static_cast<std::size_t>(w)]);
  CXLCCL_TRY(op.run());
  std::vector<std::uint64_t> sends;
  for (const Where& w : all) sends.push_back(w.send);
  const bool rootInPool = all[static_cast<std::size_t>(root)].recv != 0;
  comm.pushable(Rooted::reduce, root) = rootInPool;
  *pushed = rootInPool && std::find(sends.begin(), sends.end(), 0) == sends.end();
  if (!*pushed) return Status::success();

  op.begin(comm.nextOp(), hash);
  const std::size_t typeBytes = typeSize(a.type);
  const std::size_t line = kCacheLine / typeBytes;  // elements a line
  const std::size_t share = (a.count + static_cast<std::size_t>(n) * line - 1) / (static_cast<std::size_t>(n) * line) * line;
  const std::size_t first = std::min(a.count, static_cast<std::size_t>(me) * share);
  const std::size_t last = std::min(a.count, first + share);
  if (last > first)
    CXLCCL_TRY(op.reduceInPool(all[static_cast<std::size_t>(root)].recv, sends, first * typeBytes, (last - first) * typeBytes));
  static const std::uint64_t kDone = 1;
  std::vector<std::uint64_t> told(static_cast<std::size_t>(n));
  for (int w = 0; w < n; ++w)
    op.piece(Channel{w, -1}, sizeof kDone, everyoneBut(n, w), &kDone, w == me ? nullptr : &told[static_cast<std::size_t>(w)]);
  CXLCCL_TRY(op.run());
  if (me == root) op.afterPeersWrote(a.recv, bytes);
  return Status::success();
}

// The pulled reduce: every other rank publishes its vector on its ring and the root reduces them
// with its own as the chunks come. With `tell`, the root also tells whether its buffer could have
// been pushed into (tellPushable).
Status reducePulled(Comm& comm, Operation& op, const CallArgs& a, std::size_t bytes, bool tell) {
  const int n = comm.nranks(), me = comm.rank(), root = a.root;
  op.cutFiner();
  Operation::Input* inputs = op.inputsFor(static_cast<std::size_t>(n));
  for (int w = 0; w < n; ++w) {
    if (w != root) inputs[w].piece = op.piece(Channel{w, -1}, bytes, 1ull << root, a.send, nullptr);
  }
  std::uint64_t target = 0;
  if (tell) tellPushable(op, me, n, root, &target, me == root ? pushTarget(op, a.recv, bytes, bytes) : 0);
  if (me == root) {
    inputs[me].local = static_cast<const std::byte*>(a.send);
    op.combine(a.recv, bytes, inputs, static_cast<std::size_t>(n));
  }
  CXLCCL_TRY(op.run());
  if (tell) comm.pushable(Rooted::reduce, root) = target != 0;
  return Status::success();
}

// Broadcast and AllGather through delta publish (Delta.h). Receivers check their buffers while
// the writers decide how they send; then, a part at a time, writers bring the part into their
// mirrors and announce it, and receivers copy it out (part 0's announcement also says how the
// block goes); then, in one more step, the blocks that go by ring this time, this rank's own
// copy, and every receiver's word to the writers whose mirrors it read that it is done with them.
Status runDelta(Comm& comm, Operation& op, DeltaState& delta, Collective kind, const CallArgs& a, std::size_t bytes, std::uint64_t hash) {
  const int n = comm.nranks(), me = comm.rank();
  const auto self = static_cast<std::size_t>(me);
  const bool all = kind == Collective::allGather;
  auto writes = [&](int w) { return all || w == a.root; };
  auto blockOf = [&](int w) { return all ? bytesAt(a.recv, static_cast<std::size_t>(w) * bytes) : a.recv; };
  // A writer is a receiver of its own mirror too, where its receive buffer is not its send buffer.
  auto reads = [&](int w) { return writes(w) && (w != me || blockOf(me) != a.send); };
  std::vector<char> intact(static_cast<std::size_t>(n), 0);
  for (int w = 0; w < n; ++w) {
    if (reads(w) && !op.onGpu()) intact[static_cast<std::size_t>(w)] = delta.intact(w, blockOf(w), bytes);
  }
  std::vector<DeltaAnnouncement> told(static_cast<std::size_t>(n));
  if (writes(me)) CXLCCL_TRY(delta.prepare(static_cast<int>(kind), a.send, bytes, op.onGpu(), &told[self]));
  auto byRing = [&](int w) { return told[static_cast<std::size_t>(w)].mode == static_cast<std::uint64_t>(DeltaSend::ring); };
  std::vector<DeltaState::Receiving> receiving(static_cast<std::size_t>(n));
  const std::size_t partBytes = deltaPartBytes(bytes);
  for (std::size_t from = 0; from < bytes; from += partBytes) {
    const std::size_t to = std::min(bytes, from + partBytes);
    if (from > 0) {
      bool anyMirror = false;  // (the others' parts are not announced)
      for (int w = 0; w < n; ++w) anyMirror = anyMirror || (writes(w) && !byRing(w));
      if (!anyMirror) break;
      op.begin(comm.nextOp(), hash);
    }
    if (writes(me) && !byRing(me)) delta.publishPart(a.send, from, to);
    DeltaAnnouncement mine = told[self];
    for (int w = 0; w < n; ++w) {
      if (writes(w) && (from == 0 || !byRing(w)))
        op.piece(Channel{w, -1}, sizeof mine, everyoneBut(n, w), &mine, w == me ? nullptr : &told[static_cast<std::size_t>(w)]);
    }
    CXLCCL_TRY(op.run());
    for (int w = 0; w < n; ++w) {
      if (!reads(w)) continue;
      DeltaState::Receiving& r = receiving[static_cast<std::size_t>(w)];
      if (from == 0)
        CXLCCL_TRY(delta.beginApply(w, told[static_cast<std::size_t>(w)], blockOf(w), bytes, intact[static_cast<std::size_t>(w)] != 0,
                                    op.onGpu(), &r));
      CXLCCL_TRY(delta.applyPart(r, op, from, to));
    }
  }
  if (writes(me) && !byRing(me)) delta.finishPublish();
  for (int w = 0; w < n; ++w) {
    if (reads(w)) delta.finishApply(receiving[static_cast<std::size_t>(w)]);
  }

  op.begin(comm.nextOp(), hash);
  for (int w = 0; w < n; ++w) {
    if (writes(w) && byRing(w)) op.piece(Channel{w, -1}, bytes, everyoneBut(n, w), a.send, w == me ? nullptr : blockOf(w));
  }
  if (writes(me) && byRing(me)) op.copy(blockOf(me), a.send, bytes);
  static const std::uint64_t kDone = 1;
  std::vector<std::uint64_t> done(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) {
    std::uint64_t mirrorsRead = 0;
    for (int w = 0; w < n; ++w) {
      if (w != r && writes(w) && !byRing(w)) mirrorsRead |= 1ull << w;
    }
    if (mirrorsRead != 0)
      op.piece(Channel{r, -1}, sizeof kDone, mirrorsRead, &kDone,
               (mirrorsRead >> me & 1) != 0 ? &done[static_cast<std::size_t>(r)] : nullptr);
  }
  CXLCCL_TRY(op.run());
  if (writes(me)) delta.finishCall();
  return Status::success();
}

}  // namespace

const char* collectiveName(Collective kind) {
  switch (kind) {
    case Collective::allGather:
      return "AllGather";
    case Collective::broadcast:
      return "Broadcast";
    case Collective::gather:
      return "Gather";
    case Collective::scatter:
      return "Scatter";
    case Collective::reduce:
      return "Reduce";
    case Collective::allReduce:
      return "AllReduce";
    case Collective::reduceScatter:
      return "ReduceScatter";
    case Collective::allToAll:
      return "AllToAll";
  }
  return "?";
}

Status runCollective(Comm& comm, Operation& op, Collective kind, const CallArgs& a, DeltaState* delta) {
  const int n = comm.nranks();
  const int me = comm.rank();
  const std::size_t typeBytes = typeSize(a.type);
  const std::size_t bytes = a.count * typeBytes;
  std::uint64_t hash = mix(mix(mix(mix(mix(0, static_cast<std::uint64_t>(kind)), a.count), static_cast<std::uint64_t>(a.type)),
                               static_cast<std::uint64_t>(a.op)),
                           static_cast<std::uint64_t>(a.root));
  const bool deltaPublish =
      delta != nullptr && n > 1 && (kind == Collective::broadcast || kind == Collective::allGather) && delta->applies(bytes);
  if (deltaPublish) hash = mix(hash, 0xde17a);  // ranks that disagree on delta publish fail, not hang
  op.begin(comm.nextOp(), hash);
  op.setReduction(a.type, a.op);
  if (n == 1) {
    // Every collective of one rank is a copy of its input (the plans below would also publish
    // it to a ring that no one reads: 2.5x the copy's time at 1-16 MiB).
    op.copy(a.recv, a.send, bytes);
    return op.run();
  }
  if (deltaPublish) return runDelta(comm, op, *delta, kind, a, bytes, hash);
  // Gather and Reduce into a root buffer in the pool: pushed by all ranks where the buffers allow.
  const bool mayPush =
      n > 1 && ((kind == Collective::gather && bytes >= kPushBlockBytes) || (kind == Collective::reduce && bytes >= kPushReduceBytes));
  bool asked = false;  // where the buffers lie
  const bool gatherDirect = kind == Collective::gather && n > 1 && op.mayWriteDirectlyTo(a.root, bytes);
  if (mayPush && (gatherDirect || comm.pushable(kind == Collective::gather ? Rooted::gather : Rooted::reduce, a.root))) {
    bool pushed = false;
    CXLCCL_TRY(kind == Collective::gather ? gatherPushed(comm, op, a, bytes, hash, gatherDirect, &pushed)
                                          : reducePushed(comm, op, a, bytes, hash, &pushed));
    if (pushed) return Status::success();
    asked = true;
    op.begin(comm.nextOp(), hash);  // the usual plan, after the exchange of where buffers lie
  }
  auto ring = [](int writer) { return Channel{writer, -1}; };

  switch (kind) {
    case Collective::allGather:
      // Finer chunks for blocks of a few slots, as in Broadcast (2 ranks, 256 / 512 KiB: 16-22 /
      // 44-56 us a call in slot-sized chunks, 11 / 21-22 in four; Scatter and AllToAll gain as
      // much in this machine's slow mode, Send/Recv does not: docs/benchmarks.md).
      op.cutFiner();
      op.allowDirectReads();
      for (int w = 0; w < n; ++w) op.piece(ring(w), bytes, everyoneBut(n, w), a.send, bytesAt(a.recv, w * bytes));
      op.copy(bytesAt(a.recv, me * bytes), a.send, bytes);
      break;
    case Collective::broadcast:
      // A block of a few slots goes in finer chunks, so that readers copy out while the root
      // copies in (2 ranks, 512 KiB: 26-34 us a call in slot-sized chunks, 16-25 in four;
      // docs/benchmarks.md).
      op.cutFiner();
      op.allowDirectReads();
      op.piece(ring(a.root), bytes, everyoneBut(n, a.root), a.send, a.recv);
      if (me == a.root) op.copy(a.recv, a.send, bytes);
      break;
    case Collective::gather:
      return gatherPulled(comm, op, a, bytes, mayPush && !asked);
    case Collective::scatter:
      // Read directly, a peer copies its block from the root's buffer while the root copies its
      // own (2 ranks, 256 KiB-4 MiB: 1.2-1.4x faster; docs/benchmarks.md).
      op.cutFiner();
      op.allowDirectReads();
      for (int p = 0; p < n; ++p) {
        if (p != a.root) op.piece(ring(a.root), bytes, 1ull << p, bytesAt(a.send, p * bytes), a.recv);
      }
      if (me == a.root) op.copy(a.recv, bytesAt(a.send, me * bytes), bytes);
      break;
    case Collective::allToAll: {
      const void* send = a.send;
      const auto* sendBytes = static_cast<const std::byte*>(a.send);
      auto* recvBytes = static_cast<std::byte*>(a.recv);
      std::size_t total = bytes * static_cast<std::size_t>(n);
      if (sendBytes < recvBytes + total && recvBytes < sendBytes + total) {
        // In place: blocks still to be sent would be overwritten by blocks received.
        std::vector<std::byte>& copy = comm.scratch(total);
        CXLCCL_TRY(op.copyNow(copy.data(), a.send, total));
        send = copy.data();
      }
      op.cutFiner();
      op.allowDirectReads();
      for (int w = 0; w < n; ++w) {
        for (int p = 0; p < n; ++p) {
          if (p != w) op.piece(ring(w), bytes, 1ull << p, bytesAt(send, p * bytes), bytesAt(a.recv, w * bytes));
        }
      }
      op.copy(bytesAt(a.recv, me * bytes), bytesAt(send, me * bytes), bytes);
      break;
    }
    case Collective::reduce:
      return reducePulled(comm, op, a, bytes, mayPush && !asked);
    case Collective::allReduce:
      if (bytes <= kOnePhaseAllReduceBytes) {
        // Small: every rank publishes its whole vector and reduces all of them itself -- one
        // wait on the peers instead of two. The combine starts only once the vector is
        // published, so in place is safe -- as long as it is copied out, not read where it lies.
        Operation::Input* inputs = op.inputsFor(static_cast<std::size_t>(n));
        op.publishInPlace(false);
        for (int w = 0; w < n; ++w) {
          Operation::PieceRef ref = op.piece(ring(w), bytes, everyoneBut(n, w), a.send, nullptr);
          if (w != me) inputs[w].piece = ref;
        }
        op.publishInPlace(true);
        inputs[me].local = static_cast<const std::byte*>(a.send);
        op.combine(a.recv, bytes, inputs, static_cast<std::size_t>(n));
        break;
      }
      [[fallthrough]];
    case Collective::reduceScatter: {
      // Reduce-scatter: rank p reduces block p of everyone's vector; AllReduce then gathers the
      // reduced blocks, each chunk published as soon as it is reduced.
      bool all = kind == Collective::allReduce;
      Blocks blocks{all ? a.count : a.count * static_cast<std::size_t>(n), static_cast<std::size_t>(n), typeBytes};
      Operation::Input* inputs = op.inputsFor(static_cast<std::size_t>(n));
      for (int w = 0; w < n; ++w) {
        for (int p = 0; p < n; ++p) {
          if (p == w) continue;
          Operation::PieceRef ref = op.piece(ring(w), blocks.bytes(p), 1ull << p, bytesAt(a.send, blocks.offset(p)), nullptr);
          if (p == me) inputs[w].piece = ref;
        }
      }
      inputs[me].local = bytesAt(a.send, blocks.offset(me));
      void* mine = all ? bytesAt(a.recv, blocks.offset(me)) : a.recv;
      int combined = op.combine(mine, blocks.bytes(me), inputs, static_cast<std::size_t>(n));
      if (all) {
        for (int w = 0; w < n; ++w) {
          if (w == me) {
            op.publishCombined(ring(w), blocks.bytes(w), everyoneBut(n, w), mine, combined);
          } else {
            op.piece(ring(w), blocks.bytes(w), everyoneBut(n, w), nullptr, bytesAt(a.recv, blocks.offset(w)));
          }
        }
      }
      break;
    }
  }
  return op.run();
}

Status runPointToPoint(Comm& comm, Operation& op, const P2pCall* calls, std::size_t count) {
  op.begin(0, 0);
  op.allowDirectReads();                  // in a group only (publishInPlace): a lone Send returns before its Recv
  std::vector<const P2pCall*> selfSends;  // to this rank itself: matched in order, copied
  std::size_t selfMatched = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const P2pCall& call = calls[i];
    if (call.peer == comm.rank()) {
      if (call.send) {
        selfSends.push_back(&call);
        continue;
      }
      if (selfMatched == selfSends.size() || selfSends[selfMatched]->bytes != call.bytes)
        return Status::error(cxlcclInvalidUsage, "a Recv from this rank itself (", call.bytes,
                             " bytes) needs a matching Send to itself earlier in the same group");
      op.copy(call.recvBuffer, selfSends[selfMatched++]->sendBuffer, call.bytes);
      continue;
    }
    Channel c = call.send ? Channel{comm.rank(), call.peer} : Channel{call.peer, comm.rank()};
    op.tag(comm.nextMessage(c), call.bytes);
    op.piece(c, call.bytes, 1ull << c.reader, call.sendBuffer, call.recvBuffer);
  }
  if (selfMatched != selfSends.size())
    return Status::error(cxlcclInvalidUsage,
                         "a Send to this rank itself needs a matching Recv "
                         "from itself in the same group");
  return op.run();
}

}  // namespace cxlccl
