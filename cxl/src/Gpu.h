#pragma once
// Buffers on a GPU. A call given a CUDA stream learns where each of its buffers lives; a device
// buffer moves to and from the pool with cudaMemcpyAsync on that stream, straight from the
// region's mapping, which is registered with cudaHostRegister (in pieces: one registration may
// not cover a whole device pool) so the copies are DMA. Reductions on device buffers are staged
// through pinned host memory and computed by the CPU, as on host buffers.
//
// Built with CUDA when cxl/CMakeLists.txt finds it (/usr/local/cuda); otherwise, and on a machine
// without a usable GPU, GpuContext::create says so and nothing else here is reached.

#include <cstddef>
#include <memory>
#include <vector>

#include "Status.h"
#include "cxlccl.h"

namespace cxlccl {

bool builtWithCuda();

class GpuContext {
 public:
  // Checks that a GPU is usable (cudaGetDeviceCount); the error says why not.
  static Status create(std::unique_ptr<GpuContext>* out);
  ~GpuContext();
  GpuContext(const GpuContext&) = delete;
  GpuContext& operator=(const GpuContext&) = delete;

  // Whether `p` is GPU memory (device or managed) rather than host memory.
  Status onDevice(const void* p, bool* device) const;
  // Registers [base, base + bytes) for DMA, once; a failure is logged and copies then go through
  // CUDA's pageable path (slower, still right).
  void registerHost(std::byte* base, std::size_t bytes);
  // Waits for the work queued on `stream` so far.
  Status synchronize(cudaStream_t stream) const;
  // Copies n bytes in whichever direction the pointers say (cudaMemcpyDefault) on `stream` and
  // waits for it.
  Status copy(void* dst, const void* src, std::size_t n, cudaStream_t stream) const;
  // Pinned host memory of at least n bytes; `which` keeps up to two buffers apart.
  Status staging(int which, std::size_t n, std::byte** out);

 private:
  GpuContext() = default;
  struct Pinned {
    std::byte* data = nullptr;
    std::size_t bytes = 0;
  };
  std::vector<std::byte*> registered_;
  bool registerTried_ = false;
  Pinned staging_[2];
};

}  // namespace cxlccl
