#include "OneCopyFloor.h"

#include <immintrin.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

namespace collperf {
namespace {

// One per process, in a shared mapping: the round it began (its block is ready) and the round
// whose reads it finished (its peers may reuse their buffers).
struct alignas(64) Line {
  std::atomic<std::int64_t> began{0};
  std::atomic<std::int64_t> read{0};
  std::atomic<std::uint64_t> block{0};  // its send buffer's address
  std::atomic<pid_t> pid{0};
  std::atomic<double> seconds{0};  // per round, once timed
};

// Spins, then yields -- at once where the ranks outnumber the CPUs, as libcxlccl's ranks do.
void awaitAll(Line* lines, int ranks, std::atomic<std::int64_t> Line::*field, std::int64_t round) {
  static const std::uint32_t spins = ranks > sysconf(_SC_NPROCESSORS_ONLN) ? 4 : 2048;
  for (int r = 0; r < ranks; ++r) {
    for (std::uint32_t polls = 0; (lines[r].*field).load(std::memory_order_acquire) < round; ++polls) {
      if (polls < spins)
        _mm_pause();
      else
        sched_yield();
    }
  }
}

int roundsFor(std::size_t bytes) { return static_cast<int>(std::clamp<std::size_t>((256u << 20) / bytes, 20, 100000)); }

// One rank's part of every size: returns the exit status of its process.
int runRank(Line* lines, int ranks, int me, std::size_t minBytes, std::size_t maxBytes, int factor) {
  std::int64_t round = 0;
  for (std::size_t bytes = minBytes; bytes <= maxBytes; bytes *= static_cast<std::size_t>(factor)) {
    // Whole floats a block, as cxlccl-perf cuts its sizes (so that their rows match).
    const std::size_t block = bytes / sizeof(float) / static_cast<std::size_t>(ranks) * sizeof(float);
    if (block == 0) continue;
    std::vector<char> send(block * static_cast<std::size_t>(ranks), static_cast<char>(me + 1));
    std::vector<char> recv(send.size(), 0);
    lines[me].block.store(reinterpret_cast<std::uintptr_t>(send.data()), std::memory_order_relaxed);
    const int rounds = roundsFor(bytes), warmUp = 3;
    std::chrono::steady_clock::time_point start;
    for (int i = 0; i < warmUp + rounds; ++i) {
      if (i == warmUp) start = std::chrono::steady_clock::now();
      ++round;
      lines[me].began.store(round, std::memory_order_release);
      awaitAll(lines, ranks, &Line::began, round);
      for (int p = 0; p < ranks; ++p) {
        if (p == me) continue;
        // Block `me` of p's send buffer (AllToAll's; an AllGather reads p's only block: the same bytes).
        iovec mine{recv.data() + static_cast<std::size_t>(p) * block, block};
        iovec theirs{reinterpret_cast<void*>(lines[p].block.load(std::memory_order_relaxed) + static_cast<std::size_t>(me) * block), block};
        if (process_vm_readv(lines[p].pid.load(), &mine, 1, &theirs, 1, 0) != static_cast<ssize_t>(block)) {
          std::fprintf(stderr, "cxlccl-memcpy-perf: --one-copy-floor: process_vm_readv from rank %d: %s\n", p, std::strerror(errno));
          return 1;
        }
      }
      std::memcpy(recv.data() + static_cast<std::size_t>(me) * block, send.data() + static_cast<std::size_t>(me) * block, block);
      lines[me].read.store(round, std::memory_order_release);
      awaitAll(lines, ranks, &Line::read, round);
    }
    // What was read is each peer's block (a floor of copies that went wrong would be no floor).
    for (std::size_t i = 0; i < recv.size(); i += std::min<std::size_t>(4096, block)) {
      if (recv[i] != static_cast<char>(i / block + 1)) {
        std::fprintf(stderr, "cxlccl-memcpy-perf: --one-copy-floor: rank %d holds a wrong byte at %zu of %zu\n", me, i, recv.size());
        return 1;
      }
    }
    lines[me].seconds.store(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / rounds);
    // Every rank has stored its time before rank 0 prints, and before any buffer is freed.
    ++round;
    lines[me].began.store(round, std::memory_order_release);
    lines[me].read.store(round, std::memory_order_release);
    awaitAll(lines, ranks, &Line::read, round);
    // (The next size's times are stored only after rank 0 has joined its rounds, so after this.)
    if (me == 0) {
      double slowest = 0;
      for (int r = 0; r < ranks; ++r) slowest = std::max(slowest, lines[r].seconds.load());
      std::printf(" %14zu %10.2f\n", block * static_cast<std::size_t>(ranks), slowest * 1e6);
      std::fflush(stdout);
    }
  }
  return 0;
}

}  // namespace

int oneCopyFloorTable(int ranks, std::size_t minBytes, std::size_t maxBytes, int factor) {
  void* shared = mmap(nullptr, sizeof(Line) * static_cast<std::size_t>(ranks), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (shared == MAP_FAILED) {
    std::perror("cxlccl-memcpy-perf: mmap");
    return 1;
  }
  auto* lines = new (shared) Line[static_cast<std::size_t>(ranks)];
  std::printf("# one-copy floor: %d processes, each reads every other one's block with process_vm_readv and copies its own\n", ranks);
  std::printf("#%14s %10s\n#%14s %10s\n", "size", "time", "(B)", "(us)");
  std::fflush(stdout);
  std::vector<pid_t> children;
  for (int r = 0; r < ranks; ++r) {
    pid_t pid = fork();
    if (pid < 0) {
      std::perror("cxlccl-memcpy-perf: fork");
      for (pid_t c : children) kill(c, SIGKILL);
      return 1;
    }
    if (pid == 0) {
      lines[r].pid.store(getpid());
      while (std::any_of(lines, lines + ranks, [](const Line& l) { return l.pid.load() == 0; })) sched_yield();
      _exit(runRank(lines, ranks, r, minBytes, maxBytes, factor));
    }
    children.push_back(pid);
  }
  bool failed = false;
  while (!children.empty()) {
    int status = 0;
    pid_t done = waitpid(-1, &status, 0);
    if (done < 0) break;
    children.erase(std::remove(children.begin(), children.end(), done), children.end());
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      failed = true;
      for (pid_t other : children) kill(other, SIGKILL);  // they would wait for it for ever
    }
  }
  munmap(shared, sizeof(Line) * static_cast<std::size_t>(ranks));
  return failed ? 1 : 0;
}

}  // namespace collperf
