// Collectives and Send/Recv on GPU buffers (cudaMalloc'd, one stream per rank, device 0), each
// result checked against the same reference as host buffers. Exits 77 (ctest: skipped) where
// no GPU is usable; ctest label `gpu`.

#define CATCH_CONFIG_RUNNER
#include <cuda_runtime_api.h>
#include <sys/wait.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <cstdio>
#include <vector>

#include "Cases.h"
#include "Ranks.h"

using namespace cxlccl::test;

namespace {

// Asked in a child: CUDA initialised before fork() is unusable in the forked ranks.
bool gpuUsable() {
  pid_t pid = fork();
  if (pid == 0) {
    int devices = 0;
    _exit(cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0 ? 0 : 1);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

bool cudaOk(cudaError_t error, const char* what) {
  if (error != cudaSuccess) std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(error));
  return error == cudaSuccess;
}

class CudaStores : public DeviceStores {
 public:
  explicit CudaStores(std::size_t bytes) {
    ok_ = cudaOk(cudaSetDevice(0), "cudaSetDevice") && cudaOk(cudaStreamCreate(&stream_), "cudaStreamCreate") &&
          cudaOk(cudaMalloc(&send_, bytes), "cudaMalloc") && cudaOk(cudaMalloc(&recv_, bytes), "cudaMalloc");
  }
  ~CudaStores() override {
    cudaFree(send_);
    cudaFree(recv_);
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }

 private:
  void copy(void* dst, const void* src, std::size_t bytes) override { cudaMemcpy(dst, src, bytes, cudaMemcpyDefault); }
};

cxlcclComm_t initRank(int n, const cxlcclUniqueId& id, int rank) {
  cxlcclComm_t comm = nullptr;
  if (cxlcclCommInitRank(&comm, n, id, rank) != cxlcclSuccess) {
    std::fprintf(stderr, "rank %d: init: %s\n", rank, cxlcclGetLastError(nullptr));
    return nullptr;
  }
  return comm;
}

// Every collective on device buffers: movement straight between the GPU and the pool,
// reductions staged through pinned host memory.
int allCollectives(int rank, int n, const cxlcclUniqueId& id) {
  const std::vector<std::size_t> counts{1, 1001, 300001};
  const std::vector<cxlcclDataType_t> types{cxlcclUint8, cxlcclBfloat16, cxlcclFloat32, cxlcclInt64};
  CudaStores device(300001 * 8 * static_cast<std::size_t>(n) + 64);
  cxlcclComm_t comm = device.ok() ? initRank(n, id, rank) : nullptr;
  if (comm == nullptr) return 1;
  int failures = 0;
  std::uint64_t seed = 1;
  for (std::size_t count : counts) {
    for (int k = 0; k < 8; ++k) {
      for (cxlcclDataType_t type : types) {
        for (int inPlace = 0; inPlace < 2; ++inPlace) {
          cxlcclRedOp_t op = seed % 2 == 0 ? cxlcclSum : cxlcclMax;
          Case c{static_cast<Kind>(k), type, op, count, inPlace == 1, static_cast<int>(seed % static_cast<std::uint64_t>(n)), seed};
          ++seed;
          failures += runCase(comm, rank, n, c, &device);
          if (failures > 5) {
            cxlcclCommAbort(comm);
            return 1;
          }
        }
      }
    }
  }
  if (cxlcclCommDestroy(comm) != cxlcclSuccess) ++failures;
  return failures == 0 ? 0 : 1;
}

}  // namespace

TEST_CASE("every collective on GPU buffers", "[cxl][gpu]") {
  int n = GENERATE(2, 3);
  INFO(n << " ranks");
  TempPool pool;
  cxlcclUniqueId id;
  REQUIRE(cxlcclGetUniqueId(&id) == cxlcclSuccess);
  std::vector<int> codes = runRanks(
      n, [&](int rank) { return allCollectives(rank, n, id); }, 600);
  for (int code : codes) CHECK(code == 0);
}

TEST_CASE("send and recv of GPU buffers in a group and a host buffer beside them", "[cxl][gpu]") {
  TempPool pool;
  cxlcclUniqueId id;
  REQUIRE(cxlcclGetUniqueId(&id) == cxlcclSuccess);
  const std::size_t count = 3 << 20;  // 12 MiB each way: many turns of the pair's ring
  std::vector<int> codes = runRanks(2, [&](int rank) {
    CudaStores device(count * 4);
    cxlcclComm_t comm = device.ok() ? initRank(2, id, rank) : nullptr;
    if (comm == nullptr) return 1;
    int peer = 1 - rank;
    std::vector<std::int32_t> send(count), recv(count, -1), hostRecv(count, -1);
    for (std::size_t i = 0; i < count; ++i) send[i] = static_cast<std::int32_t>(i * 3 + static_cast<std::size_t>(rank));
    cudaMemcpy(device.send(), send.data(), count * 4, cudaMemcpyHostToDevice);
    cxlcclGroupStart();
    cxlcclSend(device.send(), count, cxlcclInt32, peer, comm, device.stream());
    cxlcclRecv(device.recv(), count, cxlcclInt32, peer, comm, device.stream());
    cxlcclResult_t result = cxlcclGroupEnd();
    // A device buffer sent, received in host memory (stream given: the call finds out).
    cxlcclResult_t mixed = cxlcclBroadcast(device.send(), hostRecv.data(), count, cxlcclInt32, 0, comm, device.stream());
    cudaMemcpy(recv.data(), device.recv(), count * 4, cudaMemcpyDeviceToHost);
    int failures = result == cxlcclSuccess && mixed == cxlcclSuccess ? 0 : 1;
    if (failures != 0) std::fprintf(stderr, "rank %d: %s\n", rank, cxlcclGetLastError(comm));
    for (std::size_t i = 0; i < count && failures == 0; ++i) {
      if (recv[i] != static_cast<std::int32_t>(i * 3 + static_cast<std::size_t>(peer)) || hostRecv[i] != static_cast<std::int32_t>(i * 3)) {
        std::fprintf(stderr, "rank %d: element %zu wrong\n", rank, i);
        ++failures;
      }
    }
    if (cxlcclCommDestroy(comm) != cxlcclSuccess) ++failures;
    return failures;
  });
  for (int code : codes) CHECK(code == 0);
}

int main(int argc, char** argv) {
  if (!gpuUsable()) {
    std::printf("no usable GPU (no device, or no NVIDIA driver): the GPU tests are skipped\n");
    return 77;
  }
  return Catch::Session().run(argc, argv);
}
