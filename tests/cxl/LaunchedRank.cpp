// cxlccl-test-launched: one rank started by a real launcher (mpirun, srun, torchrun). Rank, size
// and job id come from the launcher's environment (cxlcclCommInitEnv); for --seconds S (default
// 1) it runs AllReduce and AllGather and checks every result. Prints, per rank, one line:
//   PASS rank=R nranks=N calls=C start=T0 end=T1   (T0, T1: CLOCK_REALTIME seconds)
// which tests/cxl/launchers/ read to check the rank count and that concurrent jobs overlapped.
// Exits 1 on any failure, with the reason on stderr.

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <vector>

#include "cxlccl.h"

namespace {

double wallSeconds() { return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count(); }

void report(const char* what, cxlcclComm_t comm) { std::fprintf(stderr, "cxlccl-test-launched: %s: %s\n", what, cxlcclGetLastError(comm)); }

// One round: the sum of (rank + 1) * i over ranks, and every rank's block gathered.
bool round(cxlcclComm_t comm, int rank, int n, std::size_t count) {
  std::vector<long long> sum(count);
  for (std::size_t i = 0; i < count; ++i) sum[i] = (rank + 1) * static_cast<long long>(i);
  if (cxlcclAllReduce(sum.data(), sum.data(), count, cxlcclInt64, cxlcclSum, comm, nullptr) != cxlcclSuccess) {
    report("allreduce", comm);
    return false;
  }
  const long long ranksTerm = static_cast<long long>(n) * (n + 1) / 2;
  for (std::size_t i = 0; i < count; ++i)
    if (sum[i] != ranksTerm * static_cast<long long>(i)) {
      std::fprintf(stderr, "cxlccl-test-launched: allreduce element %zu is %lld, expected %lld\n", i, sum[i],
                   ranksTerm * static_cast<long long>(i));
      return false;
    }
  std::vector<int> mine(count, rank), all(count * static_cast<std::size_t>(n), -1);
  if (cxlcclAllGather(mine.data(), all.data(), count, cxlcclInt32, comm, nullptr) != cxlcclSuccess) {
    report("allgather", comm);
    return false;
  }
  for (std::size_t i = 0; i < all.size(); ++i)
    if (all[i] != static_cast<int>(i / count)) {
      std::fprintf(stderr, "cxlccl-test-launched: allgather element %zu is %d, expected %zu\n", i, all[i], i / count);
      return false;
    }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 1.0;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) {
      seconds = std::atof(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: cxlccl-test-launched [--seconds S]   (start it with mpirun, srun or torchrun)\n");
      return 2;
    }
  }
  const double start = wallSeconds();
  cxlcclComm_t comm = nullptr;
  if (cxlcclCommInitEnv(&comm, nullptr) != cxlcclSuccess) {
    report("init from the environment", nullptr);
    return 1;
  }
  int rank = 0, n = 0;
  cxlcclCommUserRank(comm, &rank);
  cxlcclCommCount(comm, &n);
  long calls = 0;
  const std::size_t counts[] = {1, 1000, 100003};
  // Rounds until every rank's time is up: the ranks agree after each round to stop together.
  for (int more = 1; more != 0;) {
    if (!round(comm, rank, n, counts[calls % 3])) return 1;
    calls += 2;
    more = wallSeconds() - start < seconds ? 1 : 0;
    if (cxlcclAllReduce(&more, &more, 1, cxlcclInt32, cxlcclMax, comm, nullptr) != cxlcclSuccess) {
      report("allreduce", comm);
      return 1;
    }
  }
  const double end = wallSeconds();
  if (cxlcclCommDestroy(comm) != cxlcclSuccess) {
    report("destroy", nullptr);
    return 1;
  }
  std::printf("PASS rank=%d nranks=%d calls=%ld start=%.3f end=%.3f\n", rank, n, calls, start, end);
  return 0;
}
