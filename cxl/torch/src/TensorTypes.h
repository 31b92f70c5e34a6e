// How torch tensors and reduce ops map onto libcxlccl's types and ops.
#pragma once

#include <ATen/ATen.h>
#include <torch/csrc/distributed/c10d/Types.hpp>

#include "cxlccl.h"

namespace cxlccl_torch {

// A reduction of `t` by `op` as libcxlccl runs it: the tensor to reduce (a view of `t`, or a
// widened copy that `narrowBack` returns to `t`), its type and op. Bool reduces as uint8 with
// SUM as MAX and PRODUCT as MIN (logical or/and), complex as pairs of reals (SUM and AVG only),
// int16 widened to int32. Throws a c10::Error naming `call` for what libcxlccl cannot reduce
// (BAND/BOR/BXOR, PREMUL_SUM, AVG of integers).
struct Reduction {
  at::Tensor tensor;  // contiguous
  cxlcclDataType_t type = cxlcclFloat32;
  cxlcclRedOp_t op = cxlcclSum;
  bool average = false;  // divide by the group's size afterwards (ReduceOp.AVG)
  bool widened = false;  // tensor is a widened copy of the caller's contiguous tensor
};
Reduction reductionOf(const at::Tensor& contiguous, const c10d::ReduceOp& op, const char* call);
// Divides for AVG and writes a widened result back into `contiguous`.
void finishReduction(const Reduction& r, at::Tensor& contiguous, int groupSize);

// Checks that a tensor can cross the pool (dense, strided, CPU or CUDA), naming the call.
void checkMovable(const at::Tensor& t, const char* call);

}  // namespace cxlccl_torch
