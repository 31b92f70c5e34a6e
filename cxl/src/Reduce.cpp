#include "Reduce.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <type_traits>

namespace cxlccl {
namespace {

struct Bf16 {
  std::uint16_t bits;
};

inline float toFloat(Bf16 v) { return std::bit_cast<float>(static_cast<std::uint32_t>(v.bits) << 16); }
inline Bf16 toBf16(float f) {
  auto u = std::bit_cast<std::uint32_t>(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return {static_cast<std::uint16_t>((u >> 16) | 0x40)};  // NaN stays NaN
  u += 0x7fffu + ((u >> 16) & 1u);                                                             // round to nearest even
  return {static_cast<std::uint16_t>(u >> 16)};
}

template <typename T>
struct Arith {  // how a stored element is computed on
  using Compute = T;
  static Compute load(T v) { return v; }
  static T store(Compute v) { return v; }
};
template <>
struct Arith<_Float16> {
  using Compute = float;
  static float load(_Float16 v) { return static_cast<float>(v); }
  static _Float16 store(float v) { return static_cast<_Float16>(v); }
};
template <>
struct Arith<Bf16> {
  using Compute = float;
  static float load(Bf16 v) { return toFloat(v); }
  static Bf16 store(float v) { return toBf16(v); }
};

// Integer sums and products wrap (as in NCCL) instead of overflowing, which C++ leaves undefined.
template <typename C>
C add(C x, C y) {
  if constexpr (std::is_integral_v<C>) {
    using U = std::make_unsigned_t<C>;
    return static_cast<C>(static_cast<U>(static_cast<U>(x) + static_cast<U>(y)));
  } else {
    return x + y;
  }
}
template <typename C>
C mul(C x, C y) {
  if constexpr (std::is_integral_v<C>) {
    using U = std::conditional_t<(sizeof(C) < sizeof(unsigned)), unsigned, std::make_unsigned_t<C>>;
    return static_cast<C>(static_cast<U>(static_cast<U>(x) * static_cast<U>(y)));
  } else {
    return x * y;
  }
}

// An AVX2 clone and a baseline one, picked at load time. Not under ThreadSanitizer: it instruments
// the resolver that picks, which runs before its runtime is up (every program crashes at load).
#if defined(__SANITIZE_THREAD__)
#define CXLCCL_AVX2_CLONES
#else
#define CXLCCL_AVX2_CLONES __attribute__((target_clones("avx2", "default")))
#endif

// out[i] = a[i] op b[i]. `out` is either `a` itself or apart from both (two loops: the compiler
// vectorises neither when it must allow for overlap).
template <typename T, typename Op>
CXLCCL_AVX2_CLONES void applyInPlace(T* __restrict acc, const T* __restrict in, std::size_t count, Op op) {
  using A = Arith<T>;
  for (std::size_t i = 0; i < count; ++i) acc[i] = A::store(op(A::load(acc[i]), A::load(in[i])));
}
template <typename T, typename Op>
CXLCCL_AVX2_CLONES void applyApart(T* __restrict out, const T* __restrict a, const T* __restrict b, std::size_t count, Op op) {
  using A = Arith<T>;
  for (std::size_t i = 0; i < count; ++i) out[i] = A::store(op(A::load(a[i]), A::load(b[i])));
}
template <typename T, typename Op>
void apply(T* out, const T* a, const T* b, std::size_t count, Op op) {
  if (out == a)
    applyInPlace(out, b, count, op);
  else
    applyApart(out, a, b, count, op);
}

template <typename T>
void reduceTyped(void* out, const void* a, const void* b, std::size_t count, cxlcclRedOp_t op) {
  using C = typename Arith<T>::Compute;
  auto* o = static_cast<T*>(out);
  const auto* x = static_cast<const T*>(a);
  const auto* y = static_cast<const T*>(b);
  switch (op) {
    case cxlcclSum:
      apply(o, x, y, count, [](C u, C v) { return add(u, v); });
      break;
    case cxlcclProd:
      apply(o, x, y, count, [](C u, C v) { return mul(u, v); });
      break;
    case cxlcclMax:
      apply(o, x, y, count, [](C u, C v) { return std::max(u, v); });
      break;
    case cxlcclMin:
      apply(o, x, y, count, [](C u, C v) { return std::min(u, v); });
      break;
    default:
      break;
  }
}

}  // namespace

std::size_t typeSize(cxlcclDataType_t type) {
  switch (type) {
    case cxlcclInt8:
    case cxlcclUint8:
      return 1;
    case cxlcclFloat16:
    case cxlcclBfloat16:
      return 2;
    case cxlcclInt32:
    case cxlcclUint32:
    case cxlcclFloat32:
      return 4;
    case cxlcclInt64:
    case cxlcclUint64:
    case cxlcclFloat64:
      return 8;
    default:
      return 0;
  }
}

const char* typeName(cxlcclDataType_t type) {
  static const char* const kNames[] = {"int8", "uint8", "int32", "uint32", "int64", "uint64", "half", "float", "double", "bfloat16"};
  return type >= 0 && type < cxlcclNumTypes ? kNames[type] : "?";
}

const char* opName(cxlcclRedOp_t op) {
  static const char* const kNames[] = {"sum", "prod", "max", "min"};
  return op >= 0 && op < cxlcclNumOps ? kNames[op] : "?";
}

void reduce(void* out, const void* a, const void* b, std::size_t count, cxlcclDataType_t type, cxlcclRedOp_t op) {
  switch (type) {
    case cxlcclInt8:
      reduceTyped<std::int8_t>(out, a, b, count, op);
      break;
    case cxlcclUint8:
      reduceTyped<std::uint8_t>(out, a, b, count, op);
      break;
    case cxlcclInt32:
      reduceTyped<std::int32_t>(out, a, b, count, op);
      break;
    case cxlcclUint32:
      reduceTyped<std::uint32_t>(out, a, b, count, op);
      break;
    case cxlcclInt64:
      reduceTyped<std::int64_t>(out, a, b, count, op);
      break;
    case cxlcclUint64:
      reduceTyped<std::uint64_t>(out, a, b, count, op);
      break;
    case cxlcclFloat16:
      reduceTyped<_Float16>(out, a, b, count, op);
      break;
    case cxlcclFloat32:
      reduceTyped<float>(out, a, b, count, op);
      break;
    case cxlcclFloat64:
      reduceTyped<double>(out, a, b, count, op);
      break;
    case cxlcclBfloat16:
      reduceTyped<Bf16>(out, a, b, count, op);
      break;
    default:
      break;
  }
}

}  // namespace cxlccl
