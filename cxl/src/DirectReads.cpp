#include "DirectReads.h"

#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <random>

#include "Collectives.h"
#include "Comm.h"
#include "PageBuffer.h"

namespace cxlccl {
namespace {

constexpr std::size_t kProbeBytes = 1 << 20;
// The AllGather timed both ways under `auto`: each rank's block (less with many ranks: every
// rank holds all blocks), and the rounds (the best of each way counts: a machine's copies may
// switch between a fast and a slow mode). 1 MiB: on the EPYC PVM guest direct reads won at 256
// KiB and lost from 1 MiB on, so one verdict for all sizes is taken where a loss would begin.
constexpr std::size_t kTimedBlockBytes = 1 << 20, kTimedBytesAtMost = 8 << 20;
constexpr int kTimedRounds = 5;

// Argument hashes of agree()'s exchanges: a rank that calls something else instead fails.
constexpr std::uint64_t kProbeHash = 0xd12ec7a1, kWorksHash = 0xd12ec7a2, kVerdictHash = 0xd12ec7a3;

struct Probe {
  std::uint64_t address = 0;
  std::uint64_t nonce = 0;
  std::uint64_t timed = 0;  // 1: this rank runs under auto, and all time the AllGathers if any peer can be read
};

// [remote, remote + bytes) of process `pid` into [local, ...), or the other way, whole.
Status transfer(pid_t pid, std::byte* local, std::uintptr_t remote, std::size_t bytes, bool toRemote) {
  const char* call = toRemote ? "process_vm_writev" : "process_vm_readv";
  while (bytes > 0) {
    iovec mine{local, bytes}, theirs{reinterpret_cast<void*>(remote), bytes};
    const ssize_t moved = toRemote ? ::process_vm_writev(pid, &mine, 1, &theirs, 1, 0) : ::process_vm_readv(pid, &mine, 1, &theirs, 1, 0);
    if (moved <= 0) {
      const int err = moved < 0 ? errno : EFAULT;
      if (err == ESRCH) return Status::error(cxlcclRemoteError, "pid ", pid, " has exited");
      return Status::error(cxlcclSystemError, call, " of ", bytes, " bytes ", toRemote ? "to" : "from", " pid ", pid, ": ",
                           std::strerror(err), err == EPERM ? " (ptrace rules: kernel.yama.ptrace_scope, or another user)" : "");
    }
    local += moved;
    remote += static_cast<std::uintptr_t>(moved);
    bytes -= static_cast<std::size_t>(moved);
  }
  return Status::success();
}

// Every rank's `mine` into all[rank], through the rings.
template <typename T>
Status exchange(Comm& comm, Operation& op, std::uint64_t hash, const T& mine, std::vector<T>* all) {
  const int n = comm.nranks(), me = comm.rank();
  all->assign(static_cast<std::size_t>(n), T{});
  (*all)[static_cast<std::size_t>(me)] = mine;
  op.begin(comm.nextOp(), hash);
  for (int w = 0; w < n; ++w)
    op.piece(Channel{w, -1}, sizeof(T), everyoneBut(n, w), &mine, w == me ? nullptr : &(*all)[static_cast<std::size_t>(w)]);
  return op.run();
}

// The probe's words: the nonce, then words derived from it, so that a read of the wrong memory
// (a pid reused, another namespace) does not pass.
std::uint64_t probeWord(std::uint64_t nonce, std::size_t i) { return nonce ^ (i * 0x9e3779b97f4a7c15ull); }

Status unmapped(std::size_t bytes) {
  return Status::error(cxlcclSystemError, "cannot map ", bytes, " bytes to try the direct reads at creation: ", std::strerror(errno));
}

// Whether this rank can read peer `w`'s probe (into `scratch`, kProbeBytes), and why not.
Status readProbe(Comm& comm, int w, const Probe& probe, const PageBuffer& scratch) {
  CXLCCL_TRY(DirectReads::read(comm.pidOf(w), scratch.data(), reinterpret_cast<const void*>(probe.address), kProbeBytes));
  const auto* words = reinterpret_cast<const std::uint64_t*>(scratch.data());
  for (std::size_t i = 0; i < kProbeBytes / sizeof(std::uint64_t); i += 4096 / sizeof(std::uint64_t)) {
    if (words[i] != probeWord(probe.nonce, i))
      return Status::error(cxlcclSystemError, "its pid names another process here (another pid namespace under the same host name?)");
  }
  return Status::success();
}

// The best of kTimedRounds AllGathers of up to kTimedBlockBytes a rank, each way, in turns:
// through the rings, and read directly where the ranks can (`works`).
Status timeBothWays(Comm& comm, Operation& op, DirectReads* direct, const DirectReads& works, double* ringUs, double* directUs) {
  const auto n = static_cast<std::size_t>(comm.nranks());
  const std::size_t block = std::max(DirectReads::kMinBytes, std::min(kTimedBlockBytes, kTimedBytesAtMost / n / 4096 * 4096));
  PageBuffer send(block), recv(block * n);
  if (send.data() == nullptr || recv.data() == nullptr) return unmapped(block * (n + 1));
  std::memset(send.data(), 1, block);
  CallArgs args{send.data(), recv.data(), block, cxlcclUint8, cxlcclSum, 0};
  *ringUs = *directUs = 1e300;
  const DirectReads none;
  for (int round = 0; round < kTimedRounds; ++round) {
    for (bool directly : {false, true}) {
      *direct = directly ? works : none;
      const auto start = std::chrono::steady_clock::now();
      CXLCCL_TRY(runCollective(comm, op, Collective::allGather, args));
      const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
      double& best = directly ? *directUs : *ringUs;
      best = std::min(best, us);
    }
  }
  *direct = none;
  return Status::success();
}

}  // namespace

Status DirectReads::read(pid_t pid, void* dst, const void* src, std::size_t bytes) {
  return transfer(pid, static_cast<std::byte*>(dst), reinterpret_cast<std::uintptr_t>(src), bytes, false);
}

Status DirectReads::write(pid_t pid, std::uintptr_t dst, const void* src, std::size_t bytes) {
  // (process_vm_writev reads the local side only.)
  return transfer(pid, const_cast<std::byte*>(static_cast<const std::byte*>(src)), dst, bytes, true);
}

bool DirectReads::allRead(std::uint64_t readers, int writer) const {
  if (readsFrom_.empty() || readers == 0) return false;
  for (std::size_t r = 0; r < readsFrom_.size(); ++r) {
    if ((readers >> r & 1) != 0 && (readsFrom_[r] >> writer & 1) == 0) return false;
  }
  return true;
}

bool DirectReads::any() const {
  return std::any_of(readsFrom_.begin(), readsFrom_.end(), [](std::uint64_t from) { return from != 0; });
}

Status DirectReads::agree(Comm& comm, Operation& op, DirectMode mode, DirectReads* out) {
  const int n = comm.nranks(), me = comm.rank();
  *out = DirectReads{};
  if (n == 1) return Status::success();
  // More ranks here than CPUs: a writer would wait for readers that share its CPUs (4 ranks on 2
  // vCPUs: AllGather and AllToAll of 256 KiB-16 MiB up to 1.4x slower read directly), and the
  // timing below reads noise. `auto` stays on the ring then; `on` reads directly all the same.
  const bool crowded = mode == DirectMode::automatic && comm.oversubscribed();
  if (crowded) info("rank ", me, ": reads its peers through the pool: more ranks than CPUs on this host (CXLCCL_DIRECT=auto)");
  // The probe: filled with words derived from a nonce, read by every peer on this host.
  PageBuffer probe(kProbeBytes), scratch(kProbeBytes);
  if (probe.data() == nullptr || scratch.data() == nullptr) return unmapped(2 * kProbeBytes);
  Probe mine{reinterpret_cast<std::uintptr_t>(probe.data()), std::random_device{}() * 0x100000001ull ^ static_cast<std::uint64_t>(getpid()),
             mode == DirectMode::automatic && !crowded ? 1u : 0u};
  auto* words = reinterpret_cast<std::uint64_t*>(probe.data());
  for (std::size_t i = 0; i < kProbeBytes / sizeof(std::uint64_t); ++i) words[i] = probeWord(mine.nonce, i);
  std::vector<Probe> probes;
  CXLCCL_TRY(exchange(comm, op, kProbeHash, mine, &probes));
  std::uint64_t readable = 0;
  for (int w = 0; w < n && mode != DirectMode::off && !crowded; ++w) {
    if (w == me || !comm.onThisHost(w)) continue;
    if (Status st = readProbe(comm, w, probes[static_cast<std::size_t>(w)], scratch); !st.ok()) {
      info("rank ", me, ": reads ", comm.describeRank(w), " through the pool, not directly: ", st.message);
      continue;
    }
    readable |= 1ull << w;
  }
  // A rank says what it can read once it has read its peers' probes: when this exchange ends
  // here, no peer reads this rank's probe any more.
  DirectReads works;
  CXLCCL_TRY(exchange(comm, op, kWorksHash, readable, &works.readsFrom_));
  // Timed where any rank runs under auto (every rank takes part: all know the same then), and
  // heeded by those under auto.
  const bool timed = std::any_of(probes.begin(), probes.end(), [](const Probe& p) { return p.timed != 0; });
  std::uint64_t verdict = readable;
  if (timed && works.any()) {
    double ringUs = 0, directUs = 0;
    CXLCCL_TRY(timeBothWays(comm, op, out, works, &ringUs, &directUs));
    if (readable != 0 && mode == DirectMode::automatic) {
      if (directUs >= ringUs) verdict = 0;
      info("rank ", me, ": reads its peers on this host ", verdict != 0 ? "directly" : "through the pool",
           " (auto: the AllGathers timed at creation took ", static_cast<int>(directUs), " us read directly, ", static_cast<int>(ringUs),
           " us through the pool)");
    }
  }
  if (readable != 0 && mode == DirectMode::on) info("rank ", me, ": reads its peers on this host directly (CXLCCL_DIRECT=on)");
  return exchange(comm, op, kVerdictHash, verdict, &out->readsFrom_);
}

}  // namespace cxlccl
