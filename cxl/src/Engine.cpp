#include "Engine.h"

#include <algorithm>
#include <cstring>

#include "CacheLines.h"
#include "Copy.h"
#include "PoolBuffers.h"
#include "Reduce.h"

namespace cxlccl {
namespace {

constexpr std::size_t kCopyStep = 256 << 10;       // local copies advance this much per idle round
constexpr std::size_t kCopyAtOnceBytes = 4 << 10;  // smaller ones are made when planned

std::uint64_t tagOf(std::uint64_t op, std::uint64_t hash) { return op << 32 | (hash & 0xffffffffu); }

}  // namespace

Operation::Operation(Comm& comm) : comm_(comm) { cursors_.resize(static_cast<std::size_t>(comm.channelCount())); }

void Operation::begin(std::uint64_t op, std::uint64_t hash) {
  op_ = op;
  hash_ = hash;
  publishes_.clear();
  fetches_.clear();
  combines_.clear();
  inputs_.clear();
  copies_.clear();
  for (int index : touched_) {
    cursors_[static_cast<std::size_t>(index)].ranges.clear();
    cursors_[static_cast<std::size_t>(index)].head = 0;
  }
  touched_.clear();
  finerChunks_ = false;
  readDirect_ = false;
  gpuStagingBytes_ = 0;
  status_ = Status::success();
}

void Operation::setReduction(cxlcclDataType_t type, cxlcclRedOp_t redOp) {
  type_ = type;
  redOp_ = redOp;
  typeBytes_ = typeSize(type);
}

std::size_t Operation::chunkSize(Channel c, std::size_t bytes, bool direct) const {
  std::size_t slot = comm_.slotBytes(c);
  if (direct) return std::max(slot, kDirectChunk);
  if (!finerChunks_ || bytes >= kPipelineChunks * slot) return slot;
  std::size_t part = (bytes / kPipelineChunks + 4095) & ~std::size_t{4095};  // (whole elements of any type)
  return std::min(slot, std::max(part, kMinChunk));
}

std::uint64_t Operation::chunksOf(Channel c, std::size_t bytes, bool direct) const {
  std::size_t slot = comm_.slotBytes(c);
  if (bytes <= std::min(slot, kMinChunk)) return bytes > 0 ? 1 : 0;  // (no division for the many small)
  std::size_t size = chunkSize(c, bytes, direct);
  return (bytes + size - 1) / size;
}

std::size_t Operation::chunkOffset(Channel c, std::size_t bytes, std::uint64_t k, bool direct) const {
  return static_cast<std::size_t>(k) * chunkSize(c, bytes, direct);
}

std::size_t Operation::chunkBytes(Channel c, std::size_t bytes, std::uint64_t k, bool direct) const {
  std::size_t size = chunkSize(c, bytes, direct);
  return std::min(size, bytes - static_cast<std::size_t>(k) * size);
}

bool Operation::plannedDirect(int writer, std::size_t bytes, std::uint64_t readers) const {
  // (Not in the non-coherence simulation: what it is for is the pool's protocol.)
  return readDirect_ && inPlaceAllowed_ && bytes >= DirectReads::kMinBytes && comm_.view().mode() != Coherence::simulate &&
         comm_.direct().allRead(readers, writer);
}

void Operation::expect(Channel c, std::uint64_t first, std::uint64_t chunks) {
  int index = comm_.channelIndex(c);
  Cursor& cursor = cursors_[static_cast<std::size_t>(index)];
  if (cursor.ranges.empty()) touched_.push_back(index);
  cursor.ranges.push_back({first, first + chunks - 1});
}

Operation::PieceRef Operation::piece(Channel c, std::size_t bytes, std::uint64_t readers, const void* src, void* dst) {
  const bool direct = plannedDirect(c.writer, bytes, readers);
  std::uint64_t chunks = chunksOf(c, bytes, direct);
  PieceRef ref{c, comm_.planned(c) + 1, op_, hash_};
  comm_.planned(c) += chunks;
  if (chunks == 0) return ref;
  if (c.writer == comm_.rank()) {
    // (Chunks that fit a slot header go inline: never where they lie.)
    std::uint64_t where = bytes > comm_.layout().inlineBytes() ? poolRef(src, bytes) : 0;
    // A pool buffer is read where it lies; device memory cannot be read directly: its chunks
    // are copied to host memory first and read there (a piece planned direct never fits a slot).
    std::size_t staged = kNotStaged;
    if (direct && where == 0 && gpu_ != nullptr) {
      staged = gpuStagingBytes_;
      gpuStagingBytes_ += bytes;
    }
    publishes_.push_back(
        {op_, hash_, c, static_cast<const std::byte*>(src), bytes, readers, ref.firstSeq, chunks, 0, -1, where, direct, staged});
    if (publishes_.back().ref != 0 && !loggedInPlace_) {
      loggedInPlace_ = true;
      info("rank ", comm_.rank(), ": send buffers in the pool are read where they lie");
    }
  } else if ((readers >> comm_.rank() & 1) != 0) {
    expect(c, ref.firstSeq, chunks);
    if (dst != nullptr) fetches_.push_back({op_, hash_, c, static_cast<std::byte*>(dst), bytes, ref.firstSeq, chunks, 0, direct});
  }
  return ref;
}

void Operation::publishCombined(Channel c, std::size_t bytes, std::uint64_t readers, const void* src, int combineIndex) {
  piece(c, bytes, readers, src, nullptr);
  if (c.writer == comm_.rank() && bytes > 0) publishes_.back().readyCombine = combineIndex;
}

int Operation::combine(void* dst, std::size_t bytes, const Input* inputs, std::size_t count) {
  Channel any{comm_.rank(), -1};
  combines_.push_back({static_cast<std::byte*>(dst), bytes, inputs_.size(), count, chunksOf(any, bytes), 0, 0});
  inputs_.insert(inputs_.end(), inputs, inputs + count);
  return static_cast<int>(combines_.size()) - 1;
}

void Operation::copy(void* dst, const void* src, std::size_t bytes) {
  if (bytes == 0 || dst == src) return;
  if (bytes <= kCopyAtOnceBytes && gpu_ == nullptr) {
    std::memcpy(dst, src, bytes);
    return;
  }
  copies_.push_back({static_cast<std::byte*>(dst), static_cast<const std::byte*>(src), bytes, 0});
}

// Data in a pool buffer of this communicator's pool is published where it lies -- except in the
// simulation (whose private view covers only the region) and for device copies.
std::uint64_t Operation::poolRef(const void* p, std::size_t bytes) const {
  PoolAddress at;
  if (!inPlaceAllowed_ || gpu_ != nullptr || comm_.view().mode() == Coherence::simulate || !poolAddressOf(p, bytes, &at) ||
      at.pool != comm_.pool().path() || at.generation != comm_.pool().generation())
    return 0;
  return at.offset + 1;
}

Status Operation::inPool(std::uint64_t ref, std::size_t offset, std::size_t bytes, std::byte** out) const {
  if (ref == 0 || ref - 1 + offset + bytes > comm_.pool().bytes())
    return Status::error(cxlcclInternalError, "a pool buffer at offset ", ref - 1, " + ", offset, " (", bytes,
                         " bytes), as a peer gave it, ends beyond the pool's ", comm_.pool().bytes(), " bytes");
  *out = comm_.pool().base() + (ref - 1) + offset;
  return Status::success();
}

Status Operation::pushToPool(std::uint64_t ref, std::size_t offset, const void* src, std::size_t bytes) {
  std::byte* dst = nullptr;
  CXLCCL_TRY(inPool(ref, offset, bytes, &dst));
  const bool flush = comm_.view().mode() == Coherence::flush;
  if (!moveBulk(dst, src, bytes, flush)) return status_;
  if (flush) writeBackLines(dst, bytes);
  comm_.traffic().written += bytes;
  return Status::success();
}

Status Operation::reduceInPool(std::uint64_t dstRef, const std::vector<std::uint64_t>& srcRefs, std::size_t offset, std::size_t bytes) {
  std::byte* dst = nullptr;
  CXLCCL_TRY(inPool(dstRef, offset, bytes, &dst));
  std::vector<const std::byte*> in(srcRefs.size());
  const bool flush = comm_.view().mode() == Coherence::flush;
  for (std::size_t i = 0; i < srcRefs.size(); ++i) {
    std::byte* p = nullptr;
    CXLCCL_TRY(inPool(srcRefs[i], offset, bytes, &p));
    if (flush) invalidateLines(p, bytes);
    in[i] = p;
  }
  // A piece at a time, so that each piece's inputs are still in cache when the next is reduced in.
  constexpr std::size_t kPiece = 64 << 10;
  std::vector<const std::byte*> at(in.size());
  for (std::size_t done = 0; done < bytes; done += kPiece) {
    for (std::size_t i = 0; i < in.size(); ++i) at[i] = in[i] + done;
    reduceInOrder(dst + done, at.data(), at.size(), std::min(kPiece, bytes - done));
  }
  if (flush) writeBackLines(dst, bytes);
  comm_.traffic().read += bytes * srcRefs.size();
  comm_.traffic().written += bytes;
  return Status::success();
}

void Operation::reduceInOrder(std::byte* dst, const std::byte* const* in, std::size_t inputs, std::size_t bytes) {
  // Accumulated in place unless a later input lies there (in place, not first): then in scratch.
  std::byte* acc = dst;
  for (std::size_t i = 1; i < inputs; ++i) {
    if (in[i] < dst + bytes && dst < in[i] + bytes) acc = comm_.scratch(bytes).data();
  }
  // The first input is read where it lies, not copied into acc first.
  if (inputs == 1 && acc != in[0]) std::memcpy(acc, in[0], bytes);
  for (std::size_t i = 1; i < inputs; ++i) reduce(acc, i == 1 ? in[0] : acc, in[i], bytes / typeBytes_, type_, redOp_);
  if (acc != dst) std::memcpy(dst, acc, bytes);
}

void Operation::beforePeersUse(const void* p, std::size_t bytes) const {
  if (comm_.view().mode() == Coherence::flush) writeBackLines(p, bytes);
}

void Operation::afterPeersWrote(const void* p, std::size_t bytes) const {
  if (comm_.view().mode() == Coherence::flush) invalidateLines(p, bytes);
}

Status Operation::copyNow(void* dst, const void* src, std::size_t bytes) {
  if (gpu_ != nullptr) return gpu_->copy(dst, src, bytes, stream_);
  std::memcpy(dst, src, bytes);
  return Status::success();
}

bool Operation::moveUser(void* dst, const void* src, std::size_t bytes) {
  status_ = copyNow(dst, src, bytes);
  return status_.ok();
}

bool Operation::readChunkDirect(int writer, void* dst, const void* src, std::size_t bytes) {
  // Into device memory through host memory: process_vm_readv writes only this process's pages.
  if (gpu_ != nullptr) directScratch_.resize(bytes);
  void* to = gpu_ != nullptr ? directScratch_.data() : dst;
  status_ = directOutcome(writer, DirectReads::read(comm_.pidOf(writer), to, src, bytes), "read its data", "reading a chunk of ");
  return status_.ok() && (gpu_ == nullptr || moveUser(dst, to, bytes));
}

Status Operation::directOutcome(int peer, const Status& st, const char* acted, const char* acting) {
  // A peer whose call failed may have reused its buffer since (Comm::fail says so first): what
  // was read is not its data, nor is a read or write that failed this rank's fault.
  if (!comm_.active(peer))
    return Status::error(cxlcclRemoteError, comm_.describeRank(peer), " failed a call or left while this rank ", acted,
                         " directly: see that rank's error");
  if (st.ok()) return st;
  if (st.code != cxlcclRemoteError) return Status::error(st.code, acting, comm_.describeRank(peer), " directly: ", st.message);
  comm_.exiting(peer, std::chrono::milliseconds(1000));
  return Status::error(st.code, comm_.describeRank(peer), " exited while this rank ", acted, " directly");
}

bool Operation::mayWriteDirectlyTo(int target, std::size_t bytes) const {
  return bytes >= DirectReads::kMinBytes && comm_.linesHoldWriting() && comm_.view().mode() != Coherence::simulate &&
         comm_.direct().allRead(everyoneBut(comm_.nranks(), target), target);
}

Status Operation::writeDirect(int target, std::uintptr_t address, const void* src, std::size_t bytes) {
  static constexpr const char* kWrote = "wrote its block into it";
  static constexpr const char* kWriting = "writing a block into ";
  comm_.setWriting(op_);
  Status st = Status::success();
  const std::size_t step = chunkSize(Channel{comm_.rank(), -1}, bytes, true);
  for (std::size_t done = 0; done < bytes && st.ok(); done += step) {
    const std::size_t part = std::min(step, bytes - done);
    const void* from = static_cast<const std::byte*>(src) + done;
    if (gpu_ != nullptr) {  // out of device memory through host memory
      directScratch_.resize(part);
      st = copyNow(directScratch_.data(), from, part);
      from = directScratch_.data();
      if (!st.ok()) break;
    }
    // (A target that failed is checked before each chunk: its caller may reuse the buffer.)
    st = directOutcome(target, Status::success(), kWrote, kWriting);
    if (st.ok()) st = directOutcome(target, DirectReads::write(comm_.pidOf(target), address + done, from, part), kWrote, kWriting);
  }
  comm_.setWriting(0);
  return st;
}

bool Operation::moveBulk(void* dst, const void* src, std::size_t bytes, bool streaming) {
  if (gpu_ != nullptr) return moveUser(dst, src, bytes);
  comm_.crew().copy(dst, src, bytes, streaming);
  return true;
}

Operation::Step Operation::mismatch(const PieceRef& piece, const char* what) {
  status_ = Status::error(cxlcclInvalidUsage, comm_.describeRank(piece.channel.writer), " ", what, " than this rank (rank ", comm_.rank(),
                          "): the ranks called ", piece.channel.reader < 0 ? "collective" : "send/recv", " number ", piece.op,
                          " with different arguments (count, type, op or root)");
  return Step::failed;
}

Operation::Step Operation::ready(const PieceRef& piece, std::uint64_t k, std::size_t bytes, const std::byte** data, bool* direct) {
  Channel c = piece.channel;
  std::uint64_t seq = piece.firstSeq + k;
  Cursor& cursor = cursors_[static_cast<std::size_t>(comm_.channelIndex(c))];
  if (cursor.head >= cursor.ranges.size() || cursor.ranges[cursor.head].next != seq)
    return Step::blocked;  // an earlier piece of this ring is still being read
  const RegionView& view = comm_.view();
  const std::uint64_t tag = tagOf(piece.op, piece.hash);
  std::size_t header = comm_.slotHeader(c, comm_.headerOf(c, seq));
  std::uint64_t& seen = comm_.publishedSeen(c);
  if (seen < seq) {
    // The slot header's sequence is the chunk's doorbell: it cannot run past `seq` before this
    // rank acknowledged it.
    if (view.load(header + field::seq) != seq) {
      // The writer's last call, when it is this one with other arguments, never publishes this
      // (looked at every 64th wait: the writer writes that line every call).
      if ((++blockedPolls_ & 63) == 0) {
        std::uint64_t published = view.load(comm_.doorbell(c) + field::tag);
        if (published >> 32 == tag >> 32 && published != tag) return mismatch(piece, "published a different call");
      }
      waitMask_ |= 1ull << c.writer;
      return Step::blocked;
    }
    seen = seq;
  }
  const bool inlined = bytes <= comm_.layout().inlineBytes();
  view.refresh(header, field::payload + (inlined ? bytes : 0));
  if (view.peek(header + field::seq) != seq || view.peek(header + field::tag) != tag || view.peek(header + field::bytes) != bytes)
    return mismatch(piece, "published a different piece");
  if (inlined) {
    *data = view.at(header + field::payload);
    return Step::moved;
  }
  const std::uint64_t ref = view.peek(header + field::ref);
  if ((ref & kDirectRef) != 0) {
    if (direct == nullptr) return mismatch(piece, "published a chunk to be read directly where this rank combines it");
    *direct = true;
    *data = reinterpret_cast<const std::byte*>(ref & ~kDirectRef);
    return Step::moved;
  }
  if (ref != 0) {
    std::byte* in = nullptr;  // the writer's pool buffer
    if (Status where = inPool(ref, 0, bytes, &in); !where.ok()) {
      status_ = Status::error(where.code, comm_.describeRank(c.writer), " published a chunk where it cannot be: ", where.message);
      return Step::failed;
    }
    if (view.mode() == Coherence::flush) invalidateLines(in, bytes);
    *data = in;
    return Step::moved;
  }
  std::size_t dataAt = comm_.chunkData(c, seq, bytes);
  view.refresh(dataAt, bytes);
  *data = view.at(dataAt);
  return Step::moved;
}

void Operation::consumed(Channel c, std::uint64_t seq) {
  comm_.view().store(comm_.ack(c, comm_.rank()), seq);
  Cursor& cursor = cursors_[static_cast<std::size_t>(comm_.channelIndex(c))];
  Range& range = cursor.ranges[cursor.head];
  if (range.next++ == range.last) ++cursor.head;
}

Operation::Step Operation::stepPublish(Publish& t) {
  std::size_t offset = chunkOffset(t.c, t.bytes, t.done, t.plannedDirect);
  std::size_t bytes = chunkBytes(t.c, t.bytes, t.done, t.plannedDirect);
  if (t.readyCombine >= 0 && combines_[static_cast<std::size_t>(t.readyCombine)].doneBytes < offset + bytes) return Step::blocked;
  std::uint64_t seq = t.firstSeq + t.done;
  WriterRing& ring = comm_.writerRing(t.c);
  if (seq != ring.published + 1) return Step::blocked;  // a ring is written strictly in order
  // The header's last chunk, and for data in the ring the data slot's, must have been read by all.
  auto h = static_cast<std::size_t>(comm_.headerOf(t.c, seq));
  auto slot = static_cast<std::size_t>(comm_.slotOf(t.c, seq));
  bool inlined = bytes <= comm_.layout().inlineBytes();
  bool inRing = !inlined && t.ref == 0 && !t.plannedDirect;
  if (!comm_.acked(t.c, ring.headerSeq[h], ring.headerReaders[h], &waitMask_) ||
      (inRing && !comm_.acked(t.c, ring.slotSeq[slot], ring.slotReaders[slot], &waitMask_)))
    return Step::blocked;
  const RegionView& view = comm_.view();
  std::size_t header = comm_.slotHeader(t.c, static_cast<int>(h));
  std::uint64_t ref = 0;
  if (inlined) {
    if (!moveUser(view.at(header + field::payload), t.src + offset, bytes)) return Step::failed;
  } else {
    std::size_t data = comm_.chunkData(t.c, seq, bytes);
    if (t.readDirectly()) {
      // Read by every reader straight from here; run() waits for their acknowledgements.
      const std::byte* from = t.src + offset;
      if (t.staged != kNotStaged) {
        std::byte* host = gpuStaging_.data() + t.staged + offset;
        if (!moveUser(host, from, bytes)) return Step::failed;
        from = host;
      }
      ref = kDirectRef | reinterpret_cast<std::uintptr_t>(from);
    } else if (t.ref != 0) {
      // In a pool buffer already: readers take it from there (written back first without
      // coherence); run() waits for their acknowledgements before the caller may reuse it.
      ref = t.ref + offset;
      if (view.mode() == Coherence::flush) writeBackLines(t.src + offset, bytes);
    } else if (!moveBulk(view.at(data), t.src + offset, bytes, view.mode() == Coherence::flush)) {
      return Step::failed;
    }
    if (inRing) view.publish(data, bytes);
  }
  if (inlined || inRing) comm_.traffic().written += bytes;
  const std::uint64_t tag = tagOf(t.op, t.hash);
  view.poke(header + field::tag, tag);
  view.poke(header + field::bytes, bytes);
  view.poke(header + field::ref, ref);
  view.publish(header + field::tag, field::payload - field::tag + (inlined ? bytes : 0));
  view.store(header + field::seq, seq);  // the chunk's doorbell: last, after what it announces
  // The ring's last call, for readers that wait on a chunk this call does not publish.
  if (ring.lastTag != tag) {
    ring.lastTag = tag;
    view.store(comm_.doorbell(t.c) + field::tag, tag);
  }
  ring.headerSeq[h] = seq;
  ring.headerReaders[h] = t.readers;
  if (inRing) {
    ring.slotSeq[slot] = seq;
    ring.slotReaders[slot] = t.readers;
  }
  ring.published = seq;
  ++t.done;
  return Step::moved;
}

Operation::Step Operation::stepFetch(Fetch& t) {
  const std::byte* data = nullptr;
  std::size_t bytes = chunkBytes(t.c, t.bytes, t.done, t.plannedDirect);
  PieceRef piece{t.c, t.firstSeq, t.op, t.hash};
  bool direct = false;
  Step step = ready(piece, t.done, bytes, &data, &direct);
  if (step != Step::moved) return step;
  std::byte* dst = t.dst + chunkOffset(t.c, t.bytes, t.done, t.plannedDirect);
  if (direct) {
    if (!readChunkDirect(t.c.writer, dst, data, bytes)) return Step::failed;
  } else {
    if (!moveBulk(dst, data, bytes, t.bytes >= streamingDestinationMin())) return Step::failed;
    comm_.traffic().read += bytes;
  }
  consumed(t.c, t.firstSeq + t.done);
  ++t.done;
  return Step::moved;
}

Operation::Step Operation::stepCombine(Combine& t) {
  Channel any{comm_.rank(), -1};
  std::size_t offset = chunkOffset(any, t.bytes, t.done);
  std::size_t bytes = chunkBytes(any, t.bytes, t.done);
  if (publishingFrom(t.dst, t.bytes)) return Step::blocked;
  const Input* inputs = inputs_.data() + t.firstInput;
  // Every remote input's chunk must be there before any is reduced.
  const std::byte* data[kMaxRanks];
  for (std::size_t i = 0; i < t.inputCount; ++i) {
    if (inputs[i].local != nullptr) {
      data[i] = inputs[i].local + offset;
      continue;
    }
    Step step = ready(inputs[i].piece, t.done, bytes, &data[i]);
    if (step != Step::moved) return step;
  }
  reduceInOrder(t.dst + offset, data, t.inputCount, bytes);
  for (std::size_t i = 0; i < t.inputCount; ++i) {
    if (inputs[i].local != nullptr) continue;
    comm_.traffic().read += bytes;
    consumed(inputs[i].piece.channel, inputs[i].piece.firstSeq + t.done);
  }
  ++t.done;
  t.doneBytes = offset + bytes;
  return Step::moved;
}

bool Operation::publishingFrom(const std::byte* p, std::size_t bytes) const {
  for (const Publish& u : publishes_) {
    if (u.readyCombine < 0 && u.done < u.chunks && u.src < p + bytes && p < u.src + u.bytes) return true;
  }
  return false;
}

Operation::Step Operation::stepCopy(Copy& t) {
  if (t.done == t.bytes) return Step::blocked;
  std::size_t bytes = std::min(kCopyStep, t.bytes - t.done);
  if (!moveBulk(t.dst + t.done, t.src + t.done, bytes, t.bytes >= streamingDestinationMin())) return Step::failed;  // never overlapping
  t.done += bytes;
  return Step::moved;
}

Status Operation::run() {
  if (gpuStaging_.size() < gpuStagingBytes_) gpuStaging_.resize(gpuStagingBytes_);  // (before any address is published)
  Waiter waiter(comm_);
  for (;;) {
    bool moved = false;
    bool pending = false;
    waitMask_ = 0;
    auto account = [&](Step step) {
      if (step == Step::moved) moved = true;
      return step != Step::failed;
    };
    for (Publish& t : publishes_) {
      // A piece published from a pool buffer is done once every reader acknowledged it.
      if (t.done == t.chunks) {
        pending |= (t.ref != 0 || t.readDirectly()) && !comm_.acked(t.c, t.firstSeq + t.chunks - 1, t.readers, &waitMask_);
        continue;
      }
      if (!account(stepPublish(t))) return status_;
      pending |= t.done < t.chunks || t.ref != 0 || t.readDirectly();
    }
    for (Combine& t : combines_) {
      if (t.done == t.chunks) continue;
      if (!account(stepCombine(t))) return status_;
      pending |= t.done < t.chunks;
    }
    for (Fetch& t : fetches_) {
      if (t.done == t.chunks) continue;
      if (!account(stepFetch(t))) return status_;
      pending |= t.done < t.chunks;
    }
    if (!pending) break;
    if (moved) {
      waiter.progressed();
      continue;
    }
    Step copied = Step::blocked;
    for (Copy& t : copies_) {
      copied = stepCopy(t);
      if (copied != Step::blocked) break;
    }
    if (copied == Step::failed) return status_;
    if (copied == Step::moved) continue;
    CXLCCL_TRY(waiter.idle(waitMask_));
  }
  for (Copy& t : copies_) {
    Step step = Step::moved;
    while (step == Step::moved) step = stepCopy(t);
    if (step == Step::failed) return status_;
  }
  return Status::success();
}

}  // namespace cxlccl
