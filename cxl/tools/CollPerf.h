#pragma once
// One collectives benchmark, two transports: libcxlccl (cxlccl-perf) and Open MPI
// (cxlccl-mpi-perf). Each transport implements Backend; the driver, the table (nccl-tests' columns
// and bus-bandwidth factors) and the JSON are shared so the two are compared like for like.

#include <cstddef>
#include <string>

namespace collperf {

enum class Coll { allGather, broadcast, gather, scatter, reduce, allReduce, reduceScatter, allToAll, sendRecv };

class Backend {
 public:
  virtual ~Backend() = default;
  virtual int rank() const = 0;
  virtual int nranks() const = 0;
  // `count` elements of float per rank's block, as nccl-tests counts them.
  virtual bool run(Coll coll, const float* send, float* recv, std::size_t count, int root) = 0;
  // Backends whose buffers live elsewhere (a GPU): a size's input goes there before its runs,
  // and the checked run's result comes back. Host backends run on the host buffers as given.
  virtual void upload(const float* /*send*/, std::size_t /*sendCount*/) {}
  virtual void download(float* /*recv*/, std::size_t /*recvCount*/) {}
  virtual double maxOverRanks(double value) = 0;
  virtual double sumOverRanks(double value) = 0;
  virtual void barrier() = 0;
  virtual std::string describe() const = 0;
};

struct Settings {
  std::string collectives = "all";
  std::size_t minBytes = 8;
  std::size_t maxBytes = 64u << 20;
  int factor = 2;
  int warmup = 5;             // at least; more where they take less than warmSeconds
  double warmSeconds = 0.05;  // a size's warm-up lasts at least this long (-W)
  int iters = 20;             // at least; more where 20 take less than minSeconds
  double minSeconds = 0.05;   // a size's timed runs last at least this long (-T)
  int root = 0;
  bool check = true;
  bool gpu = false;          // cxlccl-perf --gpu: buffers in GPU memory
  bool poolBuffers = false;  // cxlccl-perf --pool-buffers: buffers from cxlcclMemAlloc
  bool bindCores = true;     // cxlccl-perf --bind core|none: one CPU a rank when they fit
  std::string json;
};

// "64", "64K", "1.5M", "2G" (binary units); false when the text is none of these.
bool parseBytes(const std::string& text, std::size_t* bytes);

// Parses the shared options (-b -e -f -w -n -r -c --json); returns false after printing usage.
bool parseSettings(int argc, char** argv, const char* program, Settings* settings, int* ranks, std::string* extra);
int runBenchmark(Backend& backend, const Settings& settings);

// Rank `rank` on the rank-th CPU this process may use, when there are at least `ranks` of them
// (as mpirun binds ranks to cores).
void bindToCore(int rank, int ranks);

}  // namespace collperf
