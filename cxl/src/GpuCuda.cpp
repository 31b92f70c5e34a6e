// GpuContext over the CUDA runtime (linked statically: the library needs only the driver, and
// loads without a GPU).

#include <cuda_runtime_api.h>

#include <algorithm>

#include "Gpu.h"

namespace cxlccl {
namespace {

// cudaHostRegister pins pages through the driver; very large single registrations fail on some
// drivers, so a region is registered in pieces of this size.
constexpr std::size_t kRegisterPiece = 1ull << 30;

Status cudaFailed(const char* what, cudaError_t error) {
  return Status::error(cxlcclUnhandledCudaError, what, ": ", cudaGetErrorName(error), " (", cudaGetErrorString(error), ")");
}

}  // namespace

bool builtWithCuda() { return true; }

Status GpuContext::create(std::unique_ptr<GpuContext>* out) {
  int devices = 0;
  cudaError_t error = cudaGetDeviceCount(&devices);
  if (error != cudaSuccess || devices == 0) {
    (void)cudaGetLastError();  // the runtime keeps a sticky copy; this call's report is enough
    return Status::error(cxlcclUnhandledCudaError,
                         "a CUDA stream was given, but no GPU is usable "
                         "here (cudaGetDeviceCount: ",
                         error == cudaSuccess ? "0 devices" : cudaGetErrorString(error), "); host buffers take stream NULL");
  }
  out->reset(new GpuContext());
  return Status::success();
}

GpuContext::~GpuContext() {
  for (std::byte* piece : registered_) cudaHostUnregister(piece);
  for (Pinned& p : staging_) {
    if (p.data != nullptr) cudaFreeHost(p.data);
  }
}

Status GpuContext::onDevice(const void* p, bool* device) const {
  cudaPointerAttributes attributes{};
  cudaError_t error = cudaPointerGetAttributes(&attributes, p);
  if (error != cudaSuccess) {
    (void)cudaGetLastError();
    return cudaFailed("cudaPointerGetAttributes of a buffer", error);
  }
  *device = attributes.type == cudaMemoryTypeDevice || attributes.type == cudaMemoryTypeManaged;
  return Status::success();
}

void GpuContext::registerHost(std::byte* base, std::size_t bytes) {
  if (registerTried_) return;
  registerTried_ = true;
  for (std::size_t at = 0; at < bytes; at += kRegisterPiece) {
    std::size_t n = std::min(kRegisterPiece, bytes - at);
    cudaError_t error = cudaHostRegister(base + at, n, cudaHostRegisterPortable);
    if (error != cudaSuccess) {
      (void)cudaGetLastError();
      warn("cudaHostRegister of the pool region (", n, " bytes at +", at, ") failed: ", cudaGetErrorString(error),
           "; device copies go through CUDA's pageable path (slower)");
      for (std::byte* piece : registered_) cudaHostUnregister(piece);
      registered_.clear();
      return;
    }
    registered_.push_back(base + at);
  }
  info("registered the pool region with CUDA in ", registered_.size(), " piece(s)");
}

Status GpuContext::synchronize(cudaStream_t stream) const {
  cudaError_t error = cudaStreamSynchronize(stream);
  if (error != cudaSuccess) return cudaFailed("cudaStreamSynchronize of the call's stream", error);
  return Status::success();
}

Status GpuContext::copy(void* dst, const void* src, std::size_t n, cudaStream_t stream) const {
  cudaError_t error = cudaMemcpyAsync(dst, src, n, cudaMemcpyDefault, stream);
  if (error != cudaSuccess) return cudaFailed("cudaMemcpyAsync between a buffer and the pool", error);
  return synchronize(stream);
}

Status GpuContext::staging(int which, std::size_t n, std::byte** out) {
  Pinned& p = staging_[which];
  if (p.bytes < n) {
    if (p.data != nullptr) cudaFreeHost(p.data);
    p = {};
    void* data = nullptr;
    cudaError_t error = cudaMallocHost(&data, n);
    if (error != cudaSuccess) return cudaFailed("cudaMallocHost for staging a reduction", error);
    p = {static_cast<std::byte*>(data), n};
  }
  *out = p.data;
  return Status::success();
}

}  // namespace cxlccl
