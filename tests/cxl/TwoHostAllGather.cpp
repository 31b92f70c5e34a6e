// cxlccl-test-allgather: one rank of an AllGather across "hosts" (VM-lab guests sharing a pool
// through ivshmem): rank, size, job and pool from the environment (cxlcclCommInitEnv). Each
// result is checked; prints "PASS allgather count=N" per size, then the same with the send
// buffer in the pool (cxlcclMemAlloc: read where it lies), exits 1 on any error.

#include <cstdio>
#include <vector>

#include "cxlccl.h"

int main() {
  cxlcclComm_t comm = nullptr;
  if (cxlcclCommInitEnv(&comm, nullptr) != cxlcclSuccess) {
    std::fprintf(stderr, "init: %s\n", cxlcclGetLastError(nullptr));
    return 1;
  }
  int rank = 0, n = 0;
  cxlcclCommUserRank(comm, &rank);
  cxlcclCommCount(comm, &n);
  // The pool's table has one writer at a time only on one host: the ranks allocate (and free)
  // their pool buffers in turn, an AllGather between turns.
  auto inTurns = [&](auto&& step) {
    for (int turn = 0; turn < n; ++turn) {
      if (turn == rank && !step()) return false;
      int token = 0;
      std::vector<int> tokens(static_cast<std::size_t>(n));
      if (cxlcclAllGather(&token, tokens.data(), 1, cxlcclInt32, comm, nullptr) != cxlcclSuccess) return false;
    }
    return true;
  };
  float* pooled = nullptr;
  if (!inTurns([&] { return cxlcclMemAlloc(reinterpret_cast<void**>(&pooled), 300001 * sizeof(float)) == cxlcclSuccess; })) {
    std::fprintf(stderr, "MemAlloc: %s\n", cxlcclGetLastError(nullptr));
    return 1;
  }
  for (bool inPool : {false, true}) {
    for (std::size_t count : {std::size_t{1}, std::size_t{1000}, std::size_t{300001}}) {
      std::vector<float> own(count), recv(count * static_cast<std::size_t>(n), -1.0f);
      float* send = inPool ? pooled : own.data();
      for (std::size_t i = 0; i < count; ++i) send[i] = static_cast<float>(rank * 1000000 + static_cast<int>(i % 999983));
      if (cxlcclAllGather(send, recv.data(), count, cxlcclFloat, comm, nullptr) != cxlcclSuccess) {
        std::fprintf(stderr, "allgather: %s\n", cxlcclGetLastError(comm));
        return 1;
      }
      for (std::size_t i = 0; i < recv.size(); ++i) {
        auto r = static_cast<int>(i / count);
        if (recv[i] != static_cast<float>(r * 1000000 + static_cast<int>(i % count % 999983))) {
          std::fprintf(stderr, "allgather count=%zu: element %zu wrong\n", count, i);
          return 1;
        }
      }
      std::printf("PASS allgather%s count=%zu rank=%d of %d\n", inPool ? " pool-buffer" : "", count, rank, n);
    }
  }
  if (!inTurns([&] { return cxlcclMemFree(pooled) == cxlcclSuccess; })) return 1;
  return cxlcclCommDestroy(comm) == cxlcclSuccess ? 0 : 1;
}
