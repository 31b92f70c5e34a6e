// What a ring's writer pays to rewrite lines its reader has just read (#20, docs/benchmarks.md):
// two threads on CPUs 0 and 1 take turns, the writer copying a chunk into a ring and the reader
// copying it out, the chunk's place moving on through the ring each turn. With a ring no larger
// than the chunk, every write lands on lines the reader still caches and must take them back
// first; with a ring larger than the reader's cache, it does not. Prints the mean time of each
// side's copy. Not part of the build:
//   g++ -O2 -std=c++20 -pthread tools/bench/RewriteCost.cpp -o /tmp/rewrite-cost && /tmp/rewrite-cost 64 64 4096
// (chunk KiB, then ring sizes in KiB)
#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

void pinTo(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

double microseconds(Clock::time_point since) { return std::chrono::duration<double, std::micro>(Clock::now() - since).count(); }

void measure(std::size_t chunk, std::size_t ring) {
  constexpr long kTurns = 20000;
  std::vector<char> source(chunk, 1), sink(chunk), shared(ring);
  std::atomic<long> written{0}, read{0};
  double writeUs = 0, readUs = 0;
  std::thread reader([&] {
    pinTo(1);
    for (long turn = 1; turn <= kTurns; ++turn) {
      while (written.load(std::memory_order_acquire) != turn) {
      }
      Clock::time_point start = Clock::now();
      std::memcpy(sink.data(), shared.data() + turn * chunk % ring, chunk);
      readUs += microseconds(start);
      read.store(turn, std::memory_order_release);
    }
  });
  pinTo(0);
  for (long turn = 1; turn <= kTurns; ++turn) {
    Clock::time_point start = Clock::now();
    std::memcpy(shared.data() + turn * chunk % ring, source.data(), chunk);
    writeUs += microseconds(start);
    written.store(turn, std::memory_order_release);
    while (read.load(std::memory_order_acquire) != turn) {
    }
  }
  reader.join();
  std::printf("chunk %zu KiB, ring %zu KiB: write %.2f us, read %.2f us\n", chunk >> 10, ring >> 10, writeUs / kTurns, readUs / kTurns);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s CHUNK_KIB RING_KIB... (a ring a multiple of the chunk)\n", argv[0]);
    return 2;
  }
  std::size_t chunk = std::strtoul(argv[1], nullptr, 10) << 10;
  for (int i = 2; i < argc; ++i) {
    std::size_t ring = std::strtoul(argv[i], nullptr, 10) << 10;
    if (chunk == 0 || ring < chunk || ring % chunk != 0) {
      std::fprintf(stderr, "%s: ring %s KiB is not a multiple of the chunk\n", argv[0], argv[i]);
      return 2;
    }
    measure(chunk, ring);
  }
  return 0;
}
