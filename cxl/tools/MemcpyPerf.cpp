// cxlccl-memcpy-perf: memcpy bandwidth per size, the ceiling the collectives are measured against.
// Prints "size GB/s" rows; sizes as cxlccl-perf's -b -e -f. With --gpu, the bound for GPU
// buffers instead: cudaMemcpy between pinned host memory and device 0, host to device and back.
// With --one-copy-floor N, the floor of an AllGather or AllToAll of N ranks over ordinary buffers
// instead (OneCopyFloor.h).

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "CollPerf.h"
#include "OneCopyFloor.h"

#ifdef CXLCCL_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

namespace {

double secondsPer(int iters, const std::chrono::steady_clock::time_point& start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / iters;
}

int iterationsFor(std::size_t bytes) { return static_cast<int>(std::max<std::size_t>(5, (256u << 20) / bytes)); }

#ifdef CXLCCL_WITH_CUDA
int gpuTable(std::size_t minBytes, std::size_t maxBytes, int factor) {
  void* host = nullptr;
  void* device = nullptr;
  if (cudaMallocHost(&host, maxBytes) != cudaSuccess || cudaMalloc(&device, maxBytes) != cudaSuccess) {
    std::fprintf(stderr, "cxlccl-memcpy-perf: --gpu: %s\n", cudaGetErrorString(cudaGetLastError()));
    return 1;
  }
  std::printf("#%14s %9s %9s\n#%14s %9s %9s\n", "size", "h2d", "d2h", "(B)", "(GB/s)", "(GB/s)");
  for (std::size_t bytes = minBytes; bytes <= maxBytes; bytes *= static_cast<std::size_t>(factor)) {
    double rate[2];
    for (int way = 0; way < 2; ++way) {
      void* dst = way == 0 ? device : host;
      const void* src = way == 0 ? host : device;
      int iters = iterationsFor(bytes);
      for (int i = 0; i < 3; ++i) cudaMemcpy(dst, src, bytes, cudaMemcpyDefault);
      auto start = std::chrono::steady_clock::now();
      for (int i = 0; i < iters; ++i) cudaMemcpy(dst, src, bytes, cudaMemcpyDefault);
      rate[way] = static_cast<double>(bytes) / secondsPer(iters, start) / 1e9;
    }
    std::printf(" %14zu %9.2f %9.2f\n", bytes, rate[0], rate[1]);
  }
  cudaFreeHost(host);
  cudaFree(device);
  return 0;
}
#endif

}  // namespace

int main(int argc, char** argv) {
  std::size_t minBytes = 64, maxBytes = 64u << 20;
  int factor = 4;
  bool gpu = false;
  int floorRanks = 0;
  for (int i = 1; i < argc; i += 2) {
    std::string arg = argv[i];
    bool ok = true;
    if (arg == "--gpu") {
      gpu = true;
      --i;
    } else if (i + 1 >= argc)
      ok = false;
    else if (arg == "-b")
      ok = collperf::parseBytes(argv[i + 1], &minBytes);
    else if (arg == "-e")
      ok = collperf::parseBytes(argv[i + 1], &maxBytes);
    else if (arg == "-f")
      factor = std::atoi(argv[i + 1]);
    else if (arg == "--one-copy-floor")
      ok = (floorRanks = std::atoi(argv[i + 1])) >= 2 && floorRanks <= 64;
    else
      ok = false;
    if (!ok) {
      std::fprintf(stderr, "usage: cxlccl-memcpy-perf [-b MIN] [-e MAX] [-f FACTOR] [--gpu | --one-copy-floor RANKS (2-64)]\n");
      return 2;
    }
  }
  if (factor < 2 || minBytes == 0 || minBytes > maxBytes) {
    std::fprintf(stderr, "cxlccl-memcpy-perf: want -f of 2 or more and 0 < -b <= -e\n");
    return 2;
  }
  if (floorRanks > 0) return collperf::oneCopyFloorTable(floorRanks, minBytes, maxBytes, factor);
  if (gpu) {
#ifdef CXLCCL_WITH_CUDA
    return gpuTable(minBytes, maxBytes, factor);
#else
    std::fprintf(stderr, "cxlccl-memcpy-perf: --gpu: built without CUDA\n");
    return 1;
#endif
  }
  std::printf("#%14s %9s\n#%14s %9s\n", "size", "memcpy", "(B)", "(GB/s)");
  for (std::size_t bytes = minBytes; bytes <= maxBytes; bytes *= static_cast<std::size_t>(factor)) {
    std::vector<char> a(bytes, 1), b(bytes, 2);
    int iters = iterationsFor(bytes);
    for (int i = 0; i < 3; ++i) std::memcpy(b.data(), a.data(), bytes);
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; ++i) {
      std::memcpy(b.data(), a.data(), bytes);
      asm volatile("" ::: "memory");
    }
    double seconds = secondsPer(iters, start);
    std::printf(" %14zu %9.2f\n", bytes, static_cast<double>(bytes) / seconds / 1e9);
  }
  return 0;
}
