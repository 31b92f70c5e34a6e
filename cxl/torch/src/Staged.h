// Tensors as the contiguous buffers that libcxlccl's calls take.
#pragma once

#include <ATen/ATen.h>

#include <cstddef>
#include <vector>

namespace cxlccl_torch {

// A tensor as one contiguous buffer: the tensor itself when it is contiguous, else a contiguous
// copy that commit() writes back into it.
class Staged {
 public:
  explicit Staged(const at::Tensor& tensor);
  at::Tensor& buffer() { return buffer_; }
  void* data() const { return buffer_.data_ptr(); }
  std::size_t bytes() const { return buffer_.nbytes(); }
  void commit();

 private:
  at::Tensor tensor_;
  at::Tensor buffer_;
};

// The tensors laid end to end in one new contiguous tensor (a gather's or scatter's flat buffer).
at::Tensor flatten(const std::vector<at::Tensor>& tensors);
// Copies `flat`, the tensors laid end to end, back into them.
void unflatten(const at::Tensor& flat, std::vector<at::Tensor>& tensors);
// A new contiguous tensor of `count` times `like`'s elements.
at::Tensor emptyTimes(const at::Tensor& like, int64_t count);

}  // namespace cxlccl_torch
