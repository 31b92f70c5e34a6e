// GpuContext in a libcxlccl built without CUDA: a stream is refused with that reason.

#include "Gpu.h"

namespace cxlccl {
namespace {

Status withoutCuda() {
  return Status::error(cxlcclUnhandledCudaError,
                       "a CUDA stream was given, but this libcxlccl was "
                       "built without CUDA (rebuild with the CUDA toolkit at /usr/local/cuda; host "
                       "buffers take stream NULL)");
}

}  // namespace

bool builtWithCuda() { return false; }
Status GpuContext::create(std::unique_ptr<GpuContext>*) { return withoutCuda(); }
GpuContext::~GpuContext() = default;
Status GpuContext::onDevice(const void*, bool*) const { return withoutCuda(); }
void GpuContext::registerHost(std::byte*, std::size_t) {}
Status GpuContext::synchronize(cudaStream_t) const { return withoutCuda(); }
Status GpuContext::copy(void*, const void*, std::size_t, cudaStream_t) const { return withoutCuda(); }
Status GpuContext::staging(int, std::size_t, std::byte**) { return withoutCuda(); }

}  // namespace cxlccl
