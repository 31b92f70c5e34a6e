#include "Comm.h"

#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "CacheLines.h"
#include "Wait.h"

namespace cxlccl {
namespace {

std::uint64_t nowMillis(Clock::time_point t) {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count());
}

// Which of n slots (or headers) sequence `seq` (from 1) takes; a mask where n is a power of two,
// as it usually is: a division is dear on the path of every small call.
int indexOf(std::uint64_t seq, std::uint64_t n) { return static_cast<int>((n & (n - 1)) == 0 ? (seq - 1) & (n - 1) : (seq - 1) % n); }

}  // namespace

Status Comm::init(int nranks, int rank, const UniqueIdData& id, const Options& options, std::unique_ptr<Comm>* out) {
  if (nranks < 1 || nranks > kMaxRanks) return Status::error(cxlcclInvalidArgument, "nranks ", nranks, ": expected 1..", kMaxRanks);
  if (rank < 0 || rank >= nranks) return Status::error(cxlcclInvalidArgument, "rank ", rank, ": expected 0..", nranks - 1);
  if (id.magic != kUniqueIdMagic)
    return Status::error(cxlcclInvalidArgument, "the unique id was not made by cxlcclGetUniqueId (bad magic)");
  std::unique_ptr<Comm> comm(new Comm());
  comm->rank_ = rank;
  comm->nranks_ = nranks;
  comm->options_ = options;
  comm->options_.layout.nranks = nranks;
  Status status = comm->attach(id);
  if (status.ok()) status = comm->waitForRanks();
  if (status.ok()) comm->watchLocalPeers();
  if (status.ok()) comm->countRanksHere();
  if (!status.ok()) {
    if (comm->view_ != nullptr) comm->leave(RankState::aborted);
    return status;
  }
  info("rank ", rank, "/", nranks, " attached to ", comm->pool_->path(), " region at ", comm->region_.offset, " (", comm->layout_.bytes(),
       " bytes, coherence ", coherenceName(comm->view_->mode()), ")");
  *out = std::move(comm);
  return Status::success();
}

Status Comm::attach(const UniqueIdData& id) {
  std::string path(id.poolPath, strnlen(id.poolPath, sizeof id.poolPath));
  std::uint64_t createBytes = 0;
  CXLCCL_TRY(poolCreateBytes(&createBytes));
  CXLCCL_TRY(Pool::open(path, createBytes, &pool_));
  if (id.poolGeneration != 0 && id.poolGeneration != pool_->generation())
    return Status::error(cxlcclInvalidUsage, "the unique id is for generation ", id.poolGeneration, " of pool ", path,
                         ", which is now at generation ", pool_->generation(), " (reformatted since): get a new id");
  RegionNonce nonce{id.nonceHigh, id.nonceLow};
  Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(options_.timeoutMs);
  std::byte* base = nullptr;
  if (rank_ == 0) {
    layout_ = Layout(options_.layout);
    CXLCCL_TRY(pool_->allocate(nonce, layout_.bytes(), static_cast<std::uint32_t>(nranks_), &region_));
    base = pool_->base() + region_.offset;
    std::memset(base, 0, layout_.controlBytes());
    auto put = [base](std::size_t offset, std::uint64_t value) { std::memcpy(base + offset, &value, sizeof value); };
    put(field::nonceHigh, nonce.high);
    put(field::nranks, static_cast<std::uint64_t>(nranks_));
    put(field::lineBytes, options_.layout.lineBytes);
    put(field::chunkBytes, options_.layout.chunkBytes);
    put(field::chunks, static_cast<std::uint64_t>(options_.layout.chunks));
    put(field::nonceLow, nonce.low);
    writeBackLines(base, layout_.controlBytes());
    put(field::magic, kCommMagic);  // last: peers take the region once they see it
    writeBackLines(base, sizeof(std::uint64_t));
  } else {
    // Rendezvous in the pool: rank 0 allocates the region named by the id and fills its header.
    Backoff backoff;
    for (;;) {
      if (pool_->find(nonce, &region_)) {
        base = pool_->base() + region_.offset;
        invalidateLines(base, 64);
        std::uint64_t header[7];
        std::memcpy(header, base, sizeof header);
        if (header[0] == kCommMagic && header[1] == nonce.high && header[6] == nonce.low) {
          if (header[2] != static_cast<std::uint64_t>(nranks_))
            return Status::error(cxlcclInvalidUsage, "rank 0 created the communicator for ", header[2], " ranks, this rank was told ",
                                 nranks_);
          LayoutParams params = layoutParamsOf(reinterpret_cast<const std::byte*>(header));
          CXLCCL_TRY(checkLayoutParams(params, region_.bytes, cat("pool ", path, " region at ", region_.offset)));
          if (params.lineBytes != options_.layout.lineBytes || params.chunkBytes != options_.layout.chunkBytes ||
              params.chunks != options_.layout.chunks)
            info("rank ", rank_, " takes rank 0's layout: lines of ", params.lineBytes, " bytes, ", params.chunks, " chunks of ",
                 params.chunkBytes, " bytes");
          options_.layout = params;
          layout_ = Layout(params);
          break;
        }
      }
      if (Clock::now() > deadline)
        return Status::error(cxlcclRemoteError, "rank 0 has not created the communicator in pool ", path, " within ", options_.timeoutMs,
                             " ms: is it running, with the same unique id and pool?");
      backoff.sleepLonger(std::chrono::microseconds(1000));
    }
  }
  Coherence mode = options_.coherence.value_or(pool_->coherent() ? Coherence::hardware : Coherence::flush);
  view_ = std::make_unique<RegionView>(base, layout_.bytes(), mode);
  pool_->mapping().prefault(base, layout_.bytes());

  int channels = nranks_ + nranks_ * nranks_;
  planned_.assign(static_cast<std::size_t>(channels), 0);
  publishedSeen_.assign(static_cast<std::size_t>(channels), 0);
  messages_.assign(static_cast<std::size_t>(channels), 0);
  for (std::deque<bool>& rooted : pushable_) rooted.assign(static_cast<std::size_t>(nranks_), false);
  writers_.resize(static_cast<std::size_t>(1 + nranks_));
  for (std::size_t i = 0; i < writers_.size(); ++i) {
    auto slotCount = static_cast<std::size_t>(i == 0 ? options_.layout.chunks : kP2pChunks);
    auto headerCount = static_cast<std::size_t>(i == 0 ? layout_.ringHeaders() : kP2pHeaders);
    writers_[i].slotSeq.assign(slotCount, 0);
    writers_[i].slotReaders.assign(slotCount, 0);
    writers_[i].headerSeq.assign(headerCount, 0);
    writers_[i].headerReaders.assign(headerCount, 0);
    writers_[i].ackSeen.assign(static_cast<std::size_t>(nranks_), 0);
  }
  peers_.assign(static_cast<std::size_t>(nranks_), PeerWatch{});

  std::size_t line = layout_.rankLine(rank_);
  char host[field::kHostBytes] = {};
  gethostname(host, sizeof host - 1);
  host_ = host;
  std::memcpy(view_->at(line + field::host), host, sizeof host);
  view_->poke(line + field::pid, static_cast<std::uint64_t>(getpid()));
  view_->poke(line + field::heartbeat, 1);
  if (linesHoldWriting()) view_->poke(line + field::writing, 0);
  view_->poke(line + field::state, static_cast<std::uint64_t>(RankState::active));
  view_->publish(line, layout_.lineBytes());
  startHeartbeat();
  return Status::success();
}

Status Comm::waitForRanks() {
  Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(options_.timeoutMs);
  Backoff backoff;
  for (int r = 0; r < nranks_; ++r) {
    for (;;) {
      // A peer may have joined, seen every rank and destroyed its communicator before this rank
      // looks: one that left has joined. One that aborted will never join.
      auto state = static_cast<RankState>(view_->load(layout_.rankLine(r) + field::state));
      if (state == RankState::active || state == RankState::left) break;
      if (state == RankState::aborted)
        return Status::error(cxlcclRemoteError, "rank ", r, " of ", nranks_,
                             " aborted the communicator before this rank had joined it: see that rank's log");
      if (Clock::now() > deadline)
        return Status::error(cxlcclRemoteError, "rank ", r, " of ", nranks_, " did not join the communicator within ", options_.timeoutMs,
                             " ms: is it running with the same unique id?");
      backoff.sleepLonger(std::chrono::microseconds(500));
    }
  }
  return Status::success();
}

// Ranks bound one to a core (as mpirun binds them) may each use one CPU and still not share
// one: what counts is the union of the local ranks' masks, read with sched_getaffinity(pid). A
// peer whose pid this process cannot see (another pid namespace) counts with this one's CPUs.
void Comm::countRanksHere() {
  cpu_set_t mine, all, one;
  if (sched_getaffinity(0, sizeof mine, &mine) != 0) CPU_ZERO(&mine);
  const int available = std::max(1, CPU_COUNT(&mine));
  all = mine;
  int here = 0;
  for (int r = 0; r < nranks_; ++r) {
    if (!onThisHost(r)) continue;
    ++here;
    if (r != rank_ && sched_getaffinity(pidOf(r), sizeof one, &one) == 0) CPU_OR(&all, &all, &one);
  }
  const int shared = std::max(1, CPU_COUNT(&all));
  oversubscribed_ = here > shared;
  if (oversubscribed_) info(here, " ranks on this host share ", shared, " CPUs: waiting yields at once");
  int threads = options_.copyThreads > 0 ? options_.copyThreads : std::clamp(std::min(available, shared / here), 1, 4);
  crew_ = std::make_unique<CopyCrew>(threads);
  if (threads > 1) info("rank ", rank_, ": ", threads, " threads share each large copy");
  if (threads > 1 && threads * here > available)
    warn("copyThreads ", threads, " for each of ", here, " ranks on this host exceeds its ", available,
         " CPUs: the copy threads will take CPU time from the ranks (measured up to 10x slower; "
         "leave CXLCCL_COPY_THREADS unset to choose from the CPUs)");
}

void Comm::startHeartbeat() {
  auto period = std::chrono::milliseconds(std::max(options_.heartbeatTimeoutMs / 8, 2));
  heartbeat_ = std::thread([this, period] {
    std::size_t offset = layout_.rankLine(rank_) + field::heartbeat;
    std::unique_lock<std::mutex> lock(heartbeatMutex_);
    while (!heartbeatWake_.wait_for(lock, period, [this] { return heartbeatStop_; })) {
      view_->poke(offset, view_->peek(offset) + 1);
      view_->publish(layout_.rankLine(rank_), layout_.lineBytes());
    }
  });
}

void Comm::stopHeartbeat() {
  if (!heartbeat_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(heartbeatMutex_);
    heartbeatStop_ = true;
  }
  heartbeatWake_.notify_all();
  heartbeat_.join();
}

Comm::~Comm() {
  stopHeartbeat();
  if (view_ != nullptr && !left_) leave(RankState::aborted);
  for (const PeerWatch& p : peers_)
    if (p.pidfd >= 0) ::close(p.pidfd);
}

// A rank on this host learns of a peer's death from the kernel at once, not from a heartbeat
// that stops (CXLCCL_HEARTBEAT_MS): a pidfd polls readable when the process exits -- a zombie
// included, which kill(pid, 0) still finds. Ranks are told apart by host name and pid, as
// everywhere here: ranks on one host in different pid namespaces must have different host names.
void Comm::watchLocalPeers() {
  for (int r = 0; r < nranks_; ++r) {
    if (r == rank_ || !onThisHost(r)) continue;
    // A peer that has left already says so in its line; its pid may be another process's now.
    if (view_->load(layout_.rankLine(r) + field::state) != static_cast<std::uint64_t>(RankState::active)) continue;
    const pid_t pid = pidOf(r);
    int fd = pid > 0 ? static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)) : -1;
    if (fd < 0) info("rank ", rank_, ": no pidfd for ", describeRank(r), " (", std::strerror(errno), "): its heartbeat tells");
    peers_[static_cast<std::size_t>(r)].pidfd = fd;
  }
}

void Comm::exiting(int peer, std::chrono::milliseconds limit) {
  PeerWatch& watch = peers_[static_cast<std::size_t>(peer)];
  watch.dead = true;
  if (watch.pidfd < 0) return;
  pollfd p{watch.pidfd, POLLIN, 0};
  ::poll(&p, 1, static_cast<int>(limit.count()));
}

void Comm::setWriting(std::uint64_t op) {
  view_->store(layout_.rankLine(rank_) + field::writing, op);
  std::atomic_thread_fence(std::memory_order_seq_cst);  // before the writer looks whether its target failed
}

void Comm::awaitWriters(std::uint64_t op, std::chrono::milliseconds limit) {
  std::atomic_thread_fence(std::memory_order_seq_cst);  // this rank's `failed` before the writers' state
  const auto until = Clock::now() + limit;
  for (int r = 0; r < nranks_; ++r) {
    if (r == rank_ || !onThisHost(r)) continue;
    while (view_->load(layout_.rankLine(r) + field::writing) == op && !exited(r)) {
      if (Clock::now() > until) {
        warn("rank ", rank_, ": ", describeRank(r), " still writes into this rank's buffer after ", limit.count(),
             " ms: the failed call returns all the same");
        return;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }
}

pid_t Comm::pidOf(int peer) const { return static_cast<pid_t>(view_->peek(layout_.rankLine(peer) + field::pid)); }

bool Comm::exited(int peer) const {
  const int fd = peers_[static_cast<std::size_t>(peer)].pidfd;
  if (fd < 0) return false;
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, 0) > 0 && (p.revents & POLLIN) != 0;
}

std::string Comm::asyncErrorMessage() const {
  std::lock_guard<std::mutex> lock(errorMutex_);
  return errorMessage_;
}

Status Comm::fail(const Status& status) {
  std::lock_guard<std::mutex> lock(errorMutex_);
  if (error_.load() == cxlcclSuccess) {
    errorMessage_ = status.message;
    error_.store(status.code, std::memory_order_release);
    // Said in the rank line before the failed call returns: a peer still reading a chunk of this
    // rank's directly learns that the caller may have reused the buffer since (DirectReads).
    if (view_ != nullptr && !left_) view_->store(layout_.rankLine(rank_) + field::state, static_cast<std::uint64_t>(RankState::failed));
  }
  return status;
}

bool Comm::active(int peer) const {
  return view_->load(layout_.rankLine(peer) + field::state) == static_cast<std::uint64_t>(RankState::active);
}

std::string Comm::hostOf(int peer) const {
  std::size_t line = layout_.rankLine(peer);
  view_->refresh(line, layout_.lineBytes());
  char host[field::kHostBytes] = {};
  std::memcpy(host, view_->at(line + field::host), sizeof host - 1);
  return host;
}

std::string Comm::describeRank(int peer) const {
  std::string host = hostOf(peer);
  return cat("rank ", peer, " (pid ", pidOf(peer), " on ", host.empty() ? "?" : host, ")");
}

Status Comm::checkPeer(int peer, Clock::time_point now, bool* left) {
  *left = false;
  if (peer == rank_) return Status::success();
  PeerWatch& watch = peers_[static_cast<std::size_t>(peer)];
  std::size_t line = layout_.rankLine(peer);
  view_->refresh(line, layout_.lineBytes());
  auto state = static_cast<RankState>(view_->peek(line + field::state));
  if (state == RankState::aborted) return Status::error(cxlcclRemoteError, describeRank(peer), " aborted the communicator");
  // (One whose call failed is waited on as before: its CommAbort or its death tells.)
  *left = state == RankState::left;
  if (*left)
    return Status::error(cxlcclRemoteError, describeRank(peer),
                         " left the communicator (CommDestroy) while this rank still waits on it: "
                         "the ranks did not call the same collectives");
  if (exited(peer)) {
    watch.dead = true;
    return Status::error(cxlcclRemoteError, describeRank(peer),
                         " exited while this rank waits on it (its pidfd "
                         "says so): it crashed or was killed");
  }
  std::uint64_t beat = view_->peek(line + field::heartbeat);
  if (beat != watch.heartbeat || nowMillis(watch.changedAt) == 0) {
    watch.heartbeat = beat;
    watch.changedAt = now;
    return Status::success();
  }
  auto silent = std::chrono::duration_cast<std::chrono::milliseconds>(now - watch.changedAt);
  if (silent.count() > options_.heartbeatTimeoutMs) {
    watch.dead = true;
    return Status::error(cxlcclRemoteError, describeRank(peer), " has not beaten its heartbeat for ", silent.count(), " ms (limit ",
                         options_.heartbeatTimeoutMs, " ms, CXLCCL_HEARTBEAT_MS): it died or hangs");
  }
  return Status::success();
}

// A peer on this host whose process is gone is dead without waiting for its heartbeat; on
// another host only the heartbeat tells (cxlccl-pool reclaim frees what such ranks leave).
bool Comm::deadOnThisHost(int peer) const {
  if (exited(peer)) return true;
  if (!onThisHost(peer)) return false;
  const pid_t pid = pidOf(peer);
  return pid > 0 && kill(pid, 0) != 0 && errno == ESRCH;
}

int Comm::channelIndex(Channel c) const { return c.reader < 0 ? c.writer : nranks_ + c.writer * nranks_ + c.reader; }

std::size_t Comm::doorbell(Channel c) const { return c.reader < 0 ? layout_.doorbell(c.writer) : layout_.p2pDoorbell(c.writer, c.reader); }
std::size_t Comm::ack(Channel c, int reader) const {
  return c.reader < 0 ? layout_.ack(reader, c.writer) : layout_.p2pAck(c.writer, c.reader);
}
std::size_t Comm::slotHeader(Channel c, int s) const {
  return c.reader < 0 ? layout_.slotHeader(c.writer, s) : layout_.p2pSlotHeader(c.writer, c.reader, s);
}
std::size_t Comm::slot(Channel c, int s) const { return c.reader < 0 ? layout_.slot(c.writer, s) : layout_.p2pSlot(c.writer, c.reader, s); }
int Comm::slots(Channel c) const { return c.reader < 0 ? options_.layout.chunks : kP2pChunks; }
int Comm::slotOf(Channel c, std::uint64_t seq) const { return indexOf(seq, static_cast<std::uint64_t>(slots(c))); }
int Comm::headerOf(Channel c, std::uint64_t seq) const {
  return indexOf(seq, static_cast<std::uint64_t>(c.reader < 0 ? layout_.ringHeaders() : kP2pHeaders));
}
std::size_t Comm::slotBytes(Channel c) const { return c.reader < 0 ? options_.layout.chunkBytes : layout_.p2pChunkBytes(); }
std::size_t Comm::chunkData(Channel c, std::uint64_t seq, std::size_t bytes) const {
  return slot(c, slotOf(c, seq)) + chunkOffsetInSlot(slotBytes(c), slots(c), seq, bytes);
}

WriterRing& Comm::writerRing(Channel c) { return writers_[static_cast<std::size_t>(c.reader < 0 ? 0 : 1 + c.reader)]; }
bool Comm::acked(Channel c, std::uint64_t seq, std::uint64_t readers, std::uint64_t* waitingOn) {
  WriterRing& ring = writerRing(c);
  for (int r = 0; readers != 0; ++r, readers >>= 1) {
    if ((readers & 1) == 0) continue;
    std::uint64_t& seen = ring.ackSeen[static_cast<std::size_t>(r)];
    if (seen >= seq) continue;
    seen = view_->load(ack(c, r));
    if (seen < seq) {
      *waitingOn |= 1ull << r;
      return false;
    }
  }
  return true;
}

std::uint64_t& Comm::planned(Channel c) { return planned_[static_cast<std::size_t>(channelIndex(c))]; }
std::uint64_t& Comm::publishedSeen(Channel c) { return publishedSeen_[static_cast<std::size_t>(channelIndex(c))]; }

std::vector<std::byte>& Comm::scratch(std::size_t bytes) {
  if (scratch_.size() < bytes) scratch_.resize(bytes);
  return scratch_;
}

Status Comm::destroy() {
  if (left_) return Status::success();
  Status status = Status::success();
  if (asyncError() == cxlcclSuccess) {
    // Peers may still be reading this rank's slots: wait for their acknowledgements.
    Waiter waiter(*this);
    for (std::size_t i = 0; i < writers_.size() && status.ok(); ++i) {
      Channel c = i == 0 ? Channel{rank_, -1} : Channel{rank_, static_cast<int>(i) - 1};
      WriterRing& ring = writers_[i];
      for (;;) {
        std::uint64_t waitingOn = 0;
        // (Every chunk has a header: a header is reused only once its last chunk was read.)
        bool done = true;
        for (std::size_t h = 0; h < ring.headerSeq.size() && done; ++h)
          done = acked(c, ring.headerSeq[h], ring.headerReaders[h], &waitingOn);
        if (done) break;
        status = waiter.idle(waitingOn);
        if (!status.ok()) break;
      }
    }
  }
  CXLCCL_TRY(leave(RankState::left));
  return status;
}

Status Comm::abort() {
  aborting_.store(true);
  return leave(RankState::aborted);
}

Status Comm::leave(RankState state) {
  if (left_) return Status::success();
  left_ = true;
  stopHeartbeat();
  view_->store(layout_.rankLine(rank_) + field::state, static_cast<std::uint64_t>(state));
  std::atomic_thread_fence(std::memory_order_seq_cst);
  bool last = true;
  for (int r = 0; r < nranks_ && last; ++r) {
    if (r == rank_ || peers_[static_cast<std::size_t>(r)].dead) continue;
    auto other = static_cast<RankState>(view_->load(layout_.rankLine(r) + field::state));
    // (A rank whose call failed still holds the region: it leaves when it aborts.)
    last = (other != RankState::active && other != RankState::failed) || deadOnThisHost(r);
  }
  if (last && pool_ != nullptr) return pool_->release(region_);
  return Status::success();
}

}  // namespace cxlccl
