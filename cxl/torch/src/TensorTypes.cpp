#include "TensorTypes.h"

#include <c10/util/Exception.h>

namespace cxlccl_torch {

namespace {

const char* opName(c10d::ReduceOp::RedOpType op) {
  switch (op) {
    case c10d::ReduceOp::SUM:
      return "SUM";
    case c10d::ReduceOp::AVG:
      return "AVG";
    case c10d::ReduceOp::PRODUCT:
      return "PRODUCT";
    case c10d::ReduceOp::MIN:
      return "MIN";
    case c10d::ReduceOp::MAX:
      return "MAX";
    case c10d::ReduceOp::BAND:
      return "BAND";
    case c10d::ReduceOp::BOR:
      return "BOR";
    case c10d::ReduceOp::BXOR:
      return "BXOR";
    case c10d::ReduceOp::PREMUL_SUM:
      return "PREMUL_SUM";
    default:
      return "an unknown op";
  }
}

cxlcclDataType_t typeOf(at::ScalarType type, const char* call) {
  switch (type) {
    case at::kChar:
      return cxlcclInt8;
    case at::kByte:
      return cxlcclUint8;
    case at::kBool:
      return cxlcclUint8;
    case at::kInt:
      return cxlcclInt32;
    case at::kLong:
      return cxlcclInt64;
    case at::kHalf:
      return cxlcclFloat16;
    case at::kBFloat16:
      return cxlcclBfloat16;
    case at::kFloat:
      return cxlcclFloat32;
    case at::kDouble:
      return cxlcclFloat64;
    default:
      TORCH_CHECK(false, "cxlccl ", call, ": cannot reduce tensors of dtype ", type,
                  " (libcxlccl reduces int8, uint8, int16, int32, int64, float16, bfloat16, float32, float64, bool "
                  "and complex64/128 with SUM or AVG)");
  }
}

}  // namespace

Reduction reductionOf(const at::Tensor& contiguous, const c10d::ReduceOp& reduceOp, const char* call) {
  const c10d::ReduceOp::RedOpType op = reduceOp.op_;
  Reduction r;
  r.tensor = contiguous;
  at::ScalarType type = contiguous.scalar_type();
  if (at::isComplexType(type)) {
    TORCH_CHECK(op == c10d::ReduceOp::SUM || op == c10d::ReduceOp::AVG, "cxlccl ", call,
                ": complex tensors reduce with SUM or AVG only, not ", opName(op));
    r.tensor = at::view_as_real(contiguous);
    type = r.tensor.scalar_type();
  } else if (type == at::kShort) {
    r.tensor = contiguous.to(at::kInt);
    r.widened = true;
    type = at::kInt;
  }
  r.type = typeOf(type, call);
  switch (op) {
    case c10d::ReduceOp::SUM:
      r.op = type == at::kBool ? cxlcclMax : cxlcclSum;
      break;
    case c10d::ReduceOp::PRODUCT:
      r.op = type == at::kBool ? cxlcclMin : cxlcclProd;
      break;
    case c10d::ReduceOp::MIN:
      r.op = cxlcclMin;
      break;
    case c10d::ReduceOp::MAX:
      r.op = cxlcclMax;
      break;
    case c10d::ReduceOp::AVG:
      TORCH_CHECK(at::isFloatingType(type), "cxlccl ", call, ": ReduceOp.AVG needs a floating-point or complex tensor, not ",
                  contiguous.scalar_type(), " (use SUM and divide)");
      r.op = cxlcclSum;
      r.average = true;
      break;
    default:
      TORCH_CHECK(false, "cxlccl ", call, ": ReduceOp.", opName(op),
                  " is not supported (libcxlccl reduces with SUM, AVG, PRODUCT, MIN and MAX)");
  }
  return r;
}

void finishReduction(const Reduction& r, at::Tensor& contiguous, int groupSize) {
  if (r.average) r.tensor.div_(groupSize);
  if (r.widened) contiguous.copy_(r.tensor);
}

void checkMovable(const at::Tensor& t, const char* call) {
  TORCH_CHECK(t.layout() == at::kStrided, "cxlccl ", call, ": only dense (strided) tensors are supported, not ", t.layout());
  TORCH_CHECK(t.device().is_cpu() || t.device().is_cuda(), "cxlccl ", call, ": tensors must be on the CPU or a CUDA device, not ",
              t.device());
}

}  // namespace cxlccl_torch
