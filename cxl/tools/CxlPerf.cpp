// cxlccl-perf: the collectives benchmark over libcxlccl, ranks forked on this host sharing a
// pool (CXLCCL_POOL, default /dev/shm/cxlccl.pool).

#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "CollPerf.h"
#include "cxlccl.h"

#ifdef CXLCCL_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

using collperf::Coll;

namespace {

class CxlBackend : public collperf::Backend {
 public:
  CxlBackend(cxlcclComm_t comm, int rank, int n, std::string coherence)
      : comm_(comm), rank_(rank), n_(n), coherence_(std::move(coherence)) {}
  int rank() const override { return rank_; }
  int nranks() const override { return n_; }
  // The mode the communicator resolved to ("pool" asks the pool's header), and what was asked.
  std::string describe() const override {
    int mode = -1;
    cxlcclCommCoherence(comm_, &mode);
    const char* resolved = mode == cxlcclCoherenceHardware   ? "hardware"
                           : mode == cxlcclCoherenceFlush    ? "flush"
                           : mode == cxlcclCoherenceSimulate ? "simulate"
                                                             : "?";
    return std::string("libcxlccl (coherence ") + resolved + (coherence_ == "pool" ? ", from the pool's header" : "") + ")";
  }
  bool run(Coll coll, const float* send, float* recv, std::size_t count, int root) override {
    return call(coll, send, recv, count, root, nullptr);
  }

 protected:
  bool call(Coll coll, const float* send, float* recv, std::size_t count, int root, cudaStream_t stream) {
    cxlcclResult_t r = cxlcclSuccess;
    switch (coll) {
      case Coll::allGather:
        r = cxlcclAllGather(send, recv, count, cxlcclFloat, comm_, stream);
        break;
      case Coll::broadcast:
        r = cxlcclBroadcast(send, recv, count, cxlcclFloat, root, comm_, stream);
        break;
      case Coll::gather:
        r = cxlcclGather(send, recv, count, cxlcclFloat, root, comm_, stream);
        break;
      case Coll::scatter:
        r = cxlcclScatter(send, recv, count, cxlcclFloat, root, comm_, stream);
        break;
      case Coll::reduce:
        r = cxlcclReduce(send, recv, count, cxlcclFloat, cxlcclSum, root, comm_, stream);
        break;
      case Coll::allReduce:
        r = cxlcclAllReduce(send, recv, count, cxlcclFloat, cxlcclSum, comm_, stream);
        break;
      case Coll::reduceScatter:
        r = cxlcclReduceScatter(send, recv, count, cxlcclFloat, cxlcclSum, comm_, stream);
        break;
      case Coll::allToAll:
        r = cxlcclAllToAll(send, recv, count, cxlcclFloat, comm_, stream);
        break;
      case Coll::sendRecv:
        cxlcclGroupStart();
        cxlcclSend(send, count, cxlcclFloat, (rank_ + 1) % n_, comm_, stream);
        cxlcclRecv(recv, count, cxlcclFloat, (rank_ - 1 + n_) % n_, comm_, stream);
        r = cxlcclGroupEnd();
        break;
    }
    if (r != cxlcclSuccess) std::fprintf(stderr, "rank %d: %s\n", rank_, cxlcclGetLastError(comm_));
    return r == cxlcclSuccess;
  }

 public:
  double maxOverRanks(double value) override {
    double out = 0;
    cxlcclAllReduce(&value, &out, 1, cxlcclDouble, cxlcclMax, comm_, nullptr);
    return out;
  }
  double sumOverRanks(double value) override {
    double out = 0;
    cxlcclAllReduce(&value, &out, 1, cxlcclDouble, cxlcclSum, comm_, nullptr);
    return out;
  }
  void barrier() override { maxOverRanks(0); }

 private:
  cxlcclComm_t comm_;
  int rank_, n_;
  std::string coherence_;
};

// Buffers of its own, not in ordinary host memory: the host buffers' contents are copied there
// before a size's runs and the checked result back, so the timed calls use these only. A kind of
// memory allocates send_ and recv_ and says how to copy to and from them.
class OwnBuffersBackend : public CxlBackend {
 public:
  OwnBuffersBackend(cxlcclComm_t comm, int rank, int n, std::string coherence, std::string what)
      : CxlBackend(comm, rank, n, std::move(coherence)), what_(std::move(what)) {}
  std::string describe() const override { return CxlBackend::describe() + ", " + what_; }
  void upload(const float* send, std::size_t count) override { copy(send_, send, count * sizeof(float)); }
  void download(float* recv, std::size_t count) override { copy(recv, recv_, count * sizeof(float)); }
  bool run(Coll coll, const float*, float*, std::size_t count, int root) override {
    return call(coll, static_cast<const float*>(send_), static_cast<float*>(recv_), count, root, stream_);
  }

 protected:
  virtual void copy(void* dst, const void* src, std::size_t bytes) = 0;
  void* send_ = nullptr;
  void* recv_ = nullptr;
  cudaStream_t stream_ = nullptr;

 private:
  std::string what_;
};

// Buffers in the pool (cxlcclMemAlloc): send buffers are published where they lie.
class PoolBufferBackend : public OwnBuffersBackend {
 public:
  PoolBufferBackend(cxlcclComm_t comm, int rank, int n, std::string coherence)
      : OwnBuffersBackend(comm, rank, n, std::move(coherence), "buffers in the pool") {}
  ~PoolBufferBackend() override {
    if (send_ != nullptr) cxlcclMemFree(send_);
    if (recv_ != nullptr) cxlcclMemFree(recv_);
  }
  bool open(std::size_t bytes) { return cxlcclMemAlloc(&send_, bytes) == cxlcclSuccess && cxlcclMemAlloc(&recv_, bytes) == cxlcclSuccess; }

 private:
  void copy(void* dst, const void* src, std::size_t bytes) override { std::memcpy(dst, src, bytes); }
};

#ifdef CXLCCL_WITH_CUDA
// Buffers in GPU memory (device 0), one stream.
class GpuBackend : public OwnBuffersBackend {
 public:
  GpuBackend(cxlcclComm_t comm, int rank, int n, std::string coherence)
      : OwnBuffersBackend(comm, rank, n, std::move(coherence), "GPU buffers") {}
  ~GpuBackend() override {
    cudaFree(send_);
    cudaFree(recv_);
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }
  bool open(std::size_t bytes) {
    return cudaSetDevice(0) == cudaSuccess && cudaStreamCreate(&stream_) == cudaSuccess && cudaMalloc(&send_, bytes) == cudaSuccess &&
           cudaMalloc(&recv_, bytes) == cudaSuccess;
  }

 private:
  void copy(void* dst, const void* src, std::size_t bytes) override { cudaMemcpy(dst, src, bytes, cudaMemcpyDefault); }
};
#endif

// The rank's backend: host buffers, pool buffers (--pool-buffers) or GPU ones (--gpu); null with
// a message when impossible.
std::unique_ptr<collperf::Backend> makeBackend(cxlcclComm_t comm, int rank, int n, const std::string& coherence,
                                               const collperf::Settings& settings) {
  if (settings.poolBuffers) {
    auto pooled = std::make_unique<PoolBufferBackend>(comm, rank, n, coherence);
    if (pooled->open(settings.maxBytes)) return pooled;
    std::fprintf(stderr, "rank %d: --pool-buffers: %s\n", rank, cxlcclGetLastError(nullptr));
    return nullptr;
  }
  if (!settings.gpu) return std::make_unique<CxlBackend>(comm, rank, n, coherence);
#ifdef CXLCCL_WITH_CUDA
  auto gpu = std::make_unique<GpuBackend>(comm, rank, n, coherence);
  if (gpu->open(settings.maxBytes)) return gpu;
  std::fprintf(stderr, "rank %d: --gpu: no usable GPU (%s)\n", rank, cudaGetErrorString(cudaGetLastError()));
#else
  std::fprintf(stderr, "cxlccl-perf: --gpu: built without CUDA\n");
#endif
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  collperf::Settings settings;
  int ranks = 2;
  std::string coherence = "pool";
  if (!collperf::parseSettings(argc, argv, "cxlccl-perf", &settings, &ranks, &coherence)) return 0;
  int mode = coherence == "pool"       ? cxlcclCoherencePool
             : coherence == "hardware" ? cxlcclCoherenceHardware
             : coherence == "flush"    ? cxlcclCoherenceFlush
             : coherence == "simulate" ? cxlcclCoherenceSimulate
                                       : -1;
  if (mode < 0 || ranks < 1 || ranks > 64) {
    std::fprintf(stderr, "cxlccl-perf: --coherence pool|hardware|flush|simulate, -g 1..64\n");
    return 2;
  }
  cxlcclUniqueId id;
  if (cxlcclGetUniqueId(&id) != cxlcclSuccess) {
    std::fprintf(stderr, "cxlccl-perf: %s\n", cxlcclGetLastError(nullptr));
    return 1;
  }
  std::vector<pid_t> children;
  for (int rank = 0; rank < ranks; ++rank) {
    pid_t pid = fork();
    if (pid != 0) {
      children.push_back(pid);
      continue;
    }
    if (settings.bindCores) collperf::bindToCore(rank, ranks);
    cxlcclConfig_t config = CXLCCL_CONFIG_INITIALIZER;
    config.coherence = mode;
    cxlcclComm_t comm = nullptr;
    if (cxlcclCommInitRankConfig(&comm, ranks, id, rank, &config) != cxlcclSuccess) {
      std::fprintf(stderr, "rank %d: %s\n", rank, cxlcclGetLastError(nullptr));
      _exit(1);
    }
    std::unique_ptr<collperf::Backend> backend = makeBackend(comm, rank, ranks, coherence, settings);
    int code = backend != nullptr ? collperf::runBenchmark(*backend, settings) : 1;
    backend.reset();
    cxlcclCommDestroy(comm);
    std::fflush(stdout);
    _exit(code);
  }
  int result = 0;
  for (pid_t pid : children) {
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) result = 1;
  }
  return result;
}
