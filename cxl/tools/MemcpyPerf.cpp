// cxlccl-memcpy-perf: memcpy bandwidth per size, the ceiling the collectives are measured against.
// Prints "size GB/s" rows; sizes as cxlccl-perf's -b -e -f.

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "CollPerf.h"

int main(int argc, char** argv) {
  std::size_t minBytes = 64, maxBytes = 64u << 20;
  int factor = 4;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string arg = argv[i];
    bool ok = true;
    if (arg == "-b") ok = collperf::parseBytes(argv[i + 1], &minBytes);
    else if (arg == "-e") ok = collperf::parseBytes(argv[i + 1], &maxBytes);
    else if (arg == "-f") factor = std::atoi(argv[i + 1]);
    else ok = false;
    if (!ok) {
      std::fprintf(stderr, "usage: cxlccl-memcpy-perf [-b MIN] [-e MAX] [-f FACTOR]\n");
      return 2;
    }
  }
  if (factor < 2 || minBytes == 0) return 2;
  std::printf("#%14s %9s\n#%14s %9s\n", "size", "memcpy", "(B)", "(GB/s)");
  for (std::size_t bytes = minBytes; bytes <= maxBytes; bytes *= static_cast<std::size_t>(factor)) {
    std::vector<char> a(bytes, 1), b(bytes, 2);
    int iters = static_cast<int>(std::max<std::size_t>(5, (256u << 20) / bytes));
    for (int i = 0; i < 3; ++i) std::memcpy(b.data(), a.data(), bytes);
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; ++i) {
      std::memcpy(b.data(), a.data(), bytes);
      asm volatile("" ::: "memory");
    }
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / iters;
    std::printf(" %14zu %9.2f\n", bytes, static_cast<double>(bytes) / seconds / 1e9);
  }
  return 0;
}
