// cxlccl-perf: the collectives benchmark over libcxlccl, ranks forked on this host sharing a
// pool (CXLCCL_POOL, default /dev/shm/cxlccl.pool).

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "CollPerf.h"
#include "cxlccl.h"

using collperf::Coll;

namespace {

class CxlBackend : public collperf::Backend {
 public:
  CxlBackend(cxlcclComm_t comm, int rank, int n, std::string coherence)
      : comm_(comm), rank_(rank), n_(n), coherence_(std::move(coherence)) {}
  int rank() const override { return rank_; }
  int nranks() const override { return n_; }
  std::string describe() const override { return "libcxlccl (coherence " + coherence_ + ")"; }
  bool run(Coll coll, const float* send, float* recv, std::size_t count, int root) override {
    cxlcclResult_t r = cxlcclSuccess;
    switch (coll) {
      case Coll::allGather: r = cxlcclAllGather(send, recv, count, cxlcclFloat, comm_, nullptr); break;
      case Coll::broadcast: r = cxlcclBroadcast(send, recv, count, cxlcclFloat, root, comm_, nullptr); break;
      case Coll::gather: r = cxlcclGather(send, recv, count, cxlcclFloat, root, comm_, nullptr); break;
      case Coll::scatter: r = cxlcclScatter(send, recv, count, cxlcclFloat, root, comm_, nullptr); break;
      case Coll::reduce: r = cxlcclReduce(send, recv, count, cxlcclFloat, cxlcclSum, root, comm_, nullptr); break;
      case Coll::allReduce: r = cxlcclAllReduce(send, recv, count, cxlcclFloat, cxlcclSum, comm_, nullptr); break;
      case Coll::reduceScatter: r = cxlcclReduceScatter(send, recv, count, cxlcclFloat, cxlcclSum, comm_, nullptr); break;
      case Coll::allToAll: r = cxlcclAllToAll(send, recv, count, cxlcclFloat, comm_, nullptr); break;
      case Coll::sendRecv:
        cxlcclGroupStart();
        cxlcclSend(send, count, cxlcclFloat, (rank_ + 1) % n_, comm_, nullptr);
        cxlcclRecv(recv, count, cxlcclFloat, (rank_ - 1 + n_) % n_, comm_, nullptr);
        r = cxlcclGroupEnd();
        break;
    }
    if (r != cxlcclSuccess) std::fprintf(stderr, "rank %d: %s\n", rank_, cxlcclGetLastError(comm_));
    return r == cxlcclSuccess;
  }
  double maxOverRanks(double value) override {
    double out = 0;
    cxlcclAllReduce(&value, &out, 1, cxlcclDouble, cxlcclMax, comm_, nullptr);
    return out;
  }
  void barrier() override { maxOverRanks(0); }

 private:
  cxlcclComm_t comm_;
  int rank_, n_;
  std::string coherence_;
};

}  // namespace

int main(int argc, char** argv) {
  collperf::Settings settings;
  int ranks = 2;
  std::string coherence = "pool";
  if (!collperf::parseSettings(argc, argv, "cxlccl-perf", &settings, &ranks, &coherence)) return 0;
  int mode = coherence == "pool" ? cxlcclCoherencePool
             : coherence == "hardware" ? cxlcclCoherenceHardware
             : coherence == "flush" ? cxlcclCoherenceFlush
             : coherence == "simulate" ? cxlcclCoherenceSimulate : -1;
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
    cxlcclConfig_t config = CXLCCL_CONFIG_INITIALIZER;
    config.coherence = mode;
    cxlcclComm_t comm = nullptr;
    if (cxlcclCommInitRankConfig(&comm, ranks, id, rank, &config) != cxlcclSuccess) {
      std::fprintf(stderr, "rank %d: %s\n", rank, cxlcclGetLastError(nullptr));
      _exit(1);
    }
    CxlBackend backend(comm, rank, ranks, coherence);
    int code = collperf::runBenchmark(backend, settings);
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
