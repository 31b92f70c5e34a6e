// cxlccl-mpi-perf (Open MPI) and cxlccl-mpich-perf (MPICH): the same benchmark over MPI, the peer
// cxlccl-perf is compared with. Run it under that MPI's mpirun; tools/bench-collectives does,
// with each of the settings it compares.

#define OMPI_SKIP_MPICXX 1  // the C API only: no C++ bindings to link
#include <mpi.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "CollPerf.h"

using collperf::Coll;

namespace {

class MpiBackend : public collperf::Backend {
 public:
  MpiBackend() {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &n_);
  }
  int rank() const override { return rank_; }
  int nranks() const override { return n_; }
  std::string describe() const override {
    char version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
    int length = 0;
    MPI_Get_library_version(version, &length);
    std::string v(version, static_cast<std::size_t>(length));
    v = v.substr(0, v.find_first_of(",\n"));  // "Open MPI v4.1.4", "MPICH Version:	4.0.2"
    for (char& c : v) c = c == '\t' || c == '"' ? ' ' : c;
    return v;
  }
  bool run(Coll coll, const float* send, float* recv, std::size_t count, int root) override {
    int c = static_cast<int>(count);
    void* in = const_cast<float*>(send);
    int r = MPI_SUCCESS;
    switch (coll) {
      case Coll::allGather:
        r = MPI_Allgather(in, c, MPI_FLOAT, recv, c, MPI_FLOAT, MPI_COMM_WORLD);
        break;
      case Coll::broadcast:  // out of place, as cxlcclBroadcast: the root copies its own
        r = MPI_Bcast(rank_ == root ? in : recv, c, MPI_FLOAT, root, MPI_COMM_WORLD);
        if (rank_ == root) std::memcpy(recv, send, count * sizeof(float));
        break;
      case Coll::gather:
        r = MPI_Gather(in, c, MPI_FLOAT, recv, c, MPI_FLOAT, root, MPI_COMM_WORLD);
        break;
      case Coll::scatter:
        r = MPI_Scatter(in, c, MPI_FLOAT, recv, c, MPI_FLOAT, root, MPI_COMM_WORLD);
        break;
      case Coll::reduce:
        r = MPI_Reduce(in, recv, c, MPI_FLOAT, MPI_SUM, root, MPI_COMM_WORLD);
        break;
      case Coll::allReduce:
        r = MPI_Allreduce(in, recv, c, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        break;
      case Coll::reduceScatter:
        r = MPI_Reduce_scatter_block(in, recv, c, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        break;
      case Coll::allToAll:
        r = MPI_Alltoall(in, c, MPI_FLOAT, recv, c, MPI_FLOAT, MPI_COMM_WORLD);
        break;
      case Coll::sendRecv:
        r = MPI_Sendrecv(in, c, MPI_FLOAT, (rank_ + 1) % n_, 0, recv, c, MPI_FLOAT, (rank_ - 1 + n_) % n_, 0, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
        break;
    }
    return r == MPI_SUCCESS;
  }
  double maxOverRanks(double value) override {
    double out = 0;
    MPI_Allreduce(&value, &out, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return out;
  }
  double sumOverRanks(double value) override {
    double out = 0;
    MPI_Allreduce(&value, &out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    return out;
  }
  void barrier() override { MPI_Barrier(MPI_COMM_WORLD); }

 private:
  int rank_ = 0, n_ = 1;
};

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  collperf::Settings settings;
  int code = 0;
  if (collperf::parseSettings(argc, argv, "cxlccl-mpi-perf", &settings, nullptr, nullptr)) {
    MpiBackend backend;
    code = collperf::runBenchmark(backend, settings);
  }
  MPI_Finalize();
  return code;
}
