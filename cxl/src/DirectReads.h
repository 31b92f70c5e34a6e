#pragma once
// Same-host direct reads. A reader on its writer's host may copy a chunk straight from the
// writer's buffer with process_vm_readv(2): one copy where the ring takes two (the writer's into
// the pool, the reader's out of it), as Open MPI's CMA single copy does. Whether that pays is the
// machine's to say: on a 2-vCPU Xeon KVM guest a 1 MiB AllGather took 55-77 us read directly
// against 82-97 us through the ring; on a 2-vCPU EPYC PVM guest, whose system calls and page
// pinning pay for the hypervisor, direct reads were 1.5-2.7x slower from 1 MiB
// (docs/benchmarks.md). So at communicator creation (agree(), collective) every rank reads a
// probe each peer on its host filled with a nonce -- which proves the pid, the host and the
// kernel's permission -- and, under `auto`, times an AllGather both ways; the ranks then tell
// each other whom each reads directly. A writer then publishes the address of a chunk of a call
// that allows it (Operation::allowDirectReads) instead of the data, where every reader of the
// chunk reads it directly, and returns once they all acknowledged it. Gather turns it round:
// peers write their blocks into the root's buffer (write(); Operation::writeDirect), where each
// of them reads the root directly.

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "Status.h"

namespace cxlccl {

class Comm;
class Operation;

enum class DirectMode { off, on, automatic };

class DirectReads {
 public:
  // Pieces smaller than this go through the ring: a system call and the pinning of the
  // writer's pages cost more than two copies of a few KiB (0.6 us for 4 KiB against 0.03).
  static constexpr std::size_t kMinBytes = 64 << 10;

  // Collective: every rank of `comm` calls it once, right after creating it. A peer whose probe
  // cannot be read (another host, another pid namespace, ptrace rules) is read through the ring;
  // so is every peer under `off`. Fails only where the exchanges fail.
  static Status agree(Comm& comm, Operation& op, DirectMode mode, DirectReads* out);

  // Whether every rank in `readers` reads `writer`'s chunks directly.
  bool allRead(std::uint64_t readers, int writer) const;
  // Whether any peer reads this one directly, or this one reads any.
  bool any() const;

  // [src, src + bytes) of process `pid` into dst, whole: an error that names `pid` otherwise
  // (cxlcclRemoteError where the process has exited).
  static Status read(pid_t pid, void* dst, const void* src, std::size_t bytes);
  // [src, src + bytes) into process `pid` at `dst`: the same permission as reading it, and the
  // same errors. Used where a peer announced a buffer for this rank to write into (Gather).
  static Status write(pid_t pid, std::uintptr_t dst, const void* src, std::size_t bytes);

 private:
  std::vector<std::uint64_t> readsFrom_;  // per rank: bit w set when it reads rank w directly
};

}  // namespace cxlccl
