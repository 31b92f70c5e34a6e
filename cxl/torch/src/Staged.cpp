#include "Staged.h"

namespace cxlccl_torch {

Staged::Staged(const at::Tensor& tensor) : tensor_(tensor), buffer_(tensor.is_contiguous() ? tensor : tensor.contiguous()) {}

void Staged::commit() {
  if (!buffer_.is_same(tensor_)) tensor_.copy_(buffer_);
}

at::Tensor flatten(const std::vector<at::Tensor>& tensors) {
  std::vector<at::Tensor> flat;
  flat.reserve(tensors.size());
  for (const at::Tensor& t : tensors) flat.push_back(t.reshape({-1}));
  return at::cat(flat);
}

void unflatten(const at::Tensor& flat, std::vector<at::Tensor>& tensors) {
  int64_t offset = 0;
  for (at::Tensor& t : tensors) {
    t.copy_(flat.narrow(0, offset, t.numel()).view(t.sizes()));
    offset += t.numel();
  }
}

at::Tensor emptyTimes(const at::Tensor& like, int64_t count) { return at::empty({count * like.numel()}, like.options()); }

}  // namespace cxlccl_torch
