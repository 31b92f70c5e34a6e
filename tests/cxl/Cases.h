#pragma once
// One collective call on one rank, its buffers filled and its result checked element by element
// against a reference: the body of the collectives tests, on host buffers or (GpuTest.cpp) on
// a GPU's.

#include <cstddef>
#include <cstdint>

#include "cxlccl.h"

namespace cxlccl::test {

enum class Kind { allGather, broadcast, gather, scatter, reduce, allReduce, reduceScatter, allToAll };
const char* kindName(Kind k);
bool reduces(Kind k);

struct Case {
  Kind kind;
  cxlcclDataType_t type;
  cxlcclRedOp_t op;
  std::size_t count;
  bool inPlace;
  int root;
  std::uint64_t seed;
};

// Where a case's buffers go when not in host memory: copies of the two host stores (each
// `bytes` long) the call is given instead, and the stream it runs on. A kind of memory allocates
// send_ and recv_ (and sets ok_) and says how to copy to and from it.
class DeviceStores {
 public:
  virtual ~DeviceStores() = default;
  bool ok() const { return ok_; }
  void upload(const void* send, const void* recv, std::size_t bytes) {
    copy(send_, send, bytes);
    copy(recv_, recv, bytes);
  }
  void download(void* send, void* recv, std::size_t bytes) {
    copy(send, send_, bytes);
    copy(recv, recv_, bytes);
  }
  unsigned char* send() { return static_cast<unsigned char*>(send_); }
  unsigned char* recv() { return static_cast<unsigned char*>(recv_); }
  cudaStream_t stream() { return stream_; }

 protected:
  virtual void copy(void* dst, const void* src, std::size_t bytes) = 0;
  bool ok_ = false;
  void* send_ = nullptr;
  void* recv_ = nullptr;
  cudaStream_t stream_ = nullptr;
};

// Runs one case on this rank and checks its result; 0 when right. With `device`, the call works
// on the device stores and the stream.
int runCase(cxlcclComm_t comm, int rank, int n, const Case& c, DeviceStores* device = nullptr);

}  // namespace cxlccl::test
