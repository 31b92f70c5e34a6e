#pragma once
// A communicator: one rank's handle on a region of the pool shared with nranks - 1 others.
// It owns the region view, the rings' bookkeeping, the heartbeat thread and the error state.

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "CopyCrew.h"
#include "DirectReads.h"
#include "Layout.h"
#include "Options.h"
#include "Pool.h"
#include "RegionView.h"
#include "Status.h"

namespace cxlccl {

using Clock = std::chrono::steady_clock;

// What a cxlcclUniqueId holds.
struct UniqueIdData {
  std::uint64_t magic;
  std::uint64_t nonceHigh;
  std::uint64_t nonceLow;
  std::uint64_t poolGeneration;  // 0: not known (an id made from a job id)
  char poolPath[96];
};
static_assert(sizeof(UniqueIdData) == CXLCCL_UNIQUE_ID_BYTES);
inline constexpr std::uint64_t kUniqueIdMagic = 0x31444955434c4343ull;  // "CCLUID1"

// A ring: the collective ring of `writer` (reader == -1), or the one it keeps for `reader`.
struct Channel {
  int writer = 0;
  int reader = -1;
  bool operator==(const Channel&) const = default;
};

// The data this rank's calls moved through the pool (cxlcclCommStats).
struct PoolTraffic {
  std::uint64_t written = 0;
  std::uint64_t read = 0;
};

// Bookkeeping of a ring this rank writes.
struct WriterRing {
  std::uint64_t published = 0;
  std::vector<std::uint64_t> slotSeq;      // per data slot: the sequence it holds (0: none)
  std::vector<std::uint64_t> slotReaders;  // per data slot: who must read it before it is reused
  std::vector<std::uint64_t> headerSeq;    // the same per slot header
  std::vector<std::uint64_t> headerReaders;
  std::uint64_t lastTag = 0;           // the doorbell's tag, as last written
  std::vector<std::uint64_t> ackSeen;  // per reader: the last acknowledgement seen
};

class Comm {
 public:
  static Status init(int nranks, int rank, const UniqueIdData& id, const Options& options, std::unique_ptr<Comm>* out);
  ~Comm();
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;

  int rank() const { return rank_; }
  // More ranks on this host than CPUs this process may run on: waiting should yield at once.
  bool oversubscribed() const { return oversubscribed_; }
  int nranks() const { return nranks_; }
  const Options& options() const { return options_; }
  const Layout& layout() const { return layout_; }
  const RegionView& view() const { return *view_; }
  const Pool& pool() const { return *pool_; }
  // The pool itself, to allocate regions of this rank's own in it (delta publish's mirrors).
  std::shared_ptr<Pool> poolHandle() const { return pool_; }
  PoolTraffic& traffic() { return traffic_; }
  // Shares this rank's large copies between threads (settings: copyThreads).
  CopyCrew& crew() { return *crew_; }
  // Which ranks read which directly (DirectReads::agree, at creation).
  DirectReads& direct() { return direct_; }
  const DirectReads& direct() const { return direct_; }

  // The error that broke the communicator (cxlcclSuccess while it works) and its message.
  cxlcclResult_t asyncError() const { return error_.load(std::memory_order_acquire); }
  std::string asyncErrorMessage() const;
  // Records `status` as the communicator's error (the first one stays), marks this rank failed
  // in its rank line (RankState::failed), and returns it.
  Status fail(const Status& status);
  // Asks a call in progress on another thread to stop (CommAbort).
  bool aborting() const { return aborting_.load(std::memory_order_relaxed); }

  // Leaves after the peers have read everything this rank published; frees the region when last.
  Status destroy();
  Status abort();

  // Ring geometry.
  std::size_t doorbell(Channel c) const;
  std::size_t ack(Channel c, int reader) const;
  std::size_t slotHeader(Channel c, int slot) const;
  std::size_t slot(Channel c, int slot) const;
  int slots(Channel c) const;
  int slotOf(Channel c, std::uint64_t seq) const;    // the data slot of sequence seq (from 1)
  int headerOf(Channel c, std::uint64_t seq) const;  // its slot header
  std::size_t slotBytes(Channel c) const;
  // Where chunk `seq` of `bytes` lies: in its data slot, at chunkOffsetInSlot() (Layout.h).
  std::size_t chunkData(Channel c, std::uint64_t seq, std::size_t bytes) const;

  // Ring state, shared by the calls of this communicator.
  WriterRing& writerRing(Channel c);
  // Whether every rank in `readers` acknowledged `seq` on this rank's ring `c`; when not, the
  // first that did not is added to `waitingOn`.
  bool acked(Channel c, std::uint64_t seq, std::uint64_t readers, std::uint64_t* waitingOn);
  std::uint64_t& planned(Channel c);        // the last sequence planned on the ring
  std::uint64_t& publishedSeen(Channel c);  // the last sequence seen published on the ring
  std::uint64_t nextOp() { return ++opIndex_; }
  // Point to point: the index of the next message on the ring (sender and receiver agree).
  std::uint64_t nextMessage(Channel c) { return ++messages_[static_cast<std::size_t>(channelIndex(c))]; }
  // Gather or Reduce to `root`: whether the root's receive buffer lay in the pool at the last
  // such call (the root tells every rank in each call, so all ranks agree). Only then does the
  // call start by asking where buffers lie (gatherPushed, reducePushed), a round trip that
  // ordinary buffers need not pay.
  enum class Rooted { gather, reduce };
  bool& pushable(Rooted call, int root) { return pushable_[static_cast<std::size_t>(call)][static_cast<std::size_t>(root)]; }
  int channelIndex(Channel c) const;
  int channelCount() const { return nranks_ + nranks_ * nranks_; }
  std::vector<std::byte>& scratch(std::size_t bytes);

  // Fails when `peer` aborted, left or stopped its heartbeat (called while waiting on it).
  // `left` tells the one case that is not final: a peer may leave right after publishing what
  // the caller waits for, so the caller looks once more before giving up.
  Status checkPeer(int peer, Clock::time_point now, bool* left);
  std::string describeRank(int peer) const;
  pid_t pidOf(int peer) const;  // as the peer wrote it in its rank line
  bool active(int peer) const;  // its rank line says so: it has neither left nor failed a call
  bool onThisHost(int peer) const { return hostOf(peer) == host_; }
  // A peer on this host found exiting (a direct read of its memory failed: its address space is
  // gone) is dead; waits up to `limit` for its pidfd to say so too, so that every rank that
  // leaves after this one counts it gone (one that looked in between would keep the region).
  void exiting(int peer, std::chrono::milliseconds limit);
  // Direct writes into a peer's buffer (Gather): whether rank lines hold `field::writing`; this
  // rank's `writing` (the call's op index, 0 when done); and, for a rank whose call failed while
  // peers on its host may still write into its buffers, a wait until none of them writes in call
  // `op` any more (each stops within one chunk once this rank is marked failed), at most `limit`.
  bool linesHoldWriting() const { return layout_.lineBytes() >= field::writing + sizeof(std::uint64_t); }
  void setWriting(std::uint64_t op);
  void awaitWriters(std::uint64_t op, std::chrono::milliseconds limit);

 private:
  Comm() = default;
  Status attach(const UniqueIdData& id);
  Status waitForRanks();
  // How many ranks share this host and how many CPUs they may use between them: whether waiting
  // must yield at once, and how many copy threads a rank gets.
  void countRanksHere();
  void startHeartbeat();
  void stopHeartbeat();
  Status leave(RankState state);
  bool deadOnThisHost(int peer) const;
  std::string hostOf(int peer) const;  // as the peer wrote it in its rank line

  int rank_ = 0;
  int nranks_ = 1;
  Options options_;
  Layout layout_{LayoutParams{}};
  std::shared_ptr<Pool> pool_;
  RegionInfo region_;
  std::unique_ptr<RegionView> view_;

  std::vector<WriterRing> writers_;  // my collective ring, then my p2p ring for each peer
  std::vector<std::uint64_t> planned_;
  std::vector<std::uint64_t> publishedSeen_;
  std::vector<std::uint64_t> messages_;
  std::array<std::deque<bool>, 2> pushable_;  // by Rooted
  std::uint64_t opIndex_ = 0;
  PoolTraffic traffic_;
  std::vector<std::byte> scratch_;
  std::unique_ptr<CopyCrew> crew_;
  DirectReads direct_;

  struct PeerWatch {
    std::uint64_t heartbeat = 0;
    Clock::time_point changedAt{};
    bool dead = false;
    int pidfd = -1;  // a peer on this host: readable once its process has exited
  };
  // Opens a pidfd for each peer on this host (after waitForRanks: their pids are written).
  void watchLocalPeers();
  bool exited(int peer) const;  // its pidfd says so

  std::vector<PeerWatch> peers_;

  std::atomic<cxlcclResult_t> error_{cxlcclSuccess};
  mutable std::mutex errorMutex_;
  std::string errorMessage_;
  std::atomic<bool> aborting_{false};
  bool left_ = false;
  bool oversubscribed_ = false;
  std::string host_;  // this host's name, as written in this rank's line

  std::thread heartbeat_;
  std::mutex heartbeatMutex_;
  std::condition_variable heartbeatWake_;
  bool heartbeatStop_ = false;
};

}  // namespace cxlccl
