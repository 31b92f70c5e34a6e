#include "mtm/profiler/ClearCost.h"

#include <algorithm>

namespace mtm::profiler {
namespace {

// How much the host's figures weigh against the clears seen: as much as one clear of one iovec
// (for the iovec share) and one of one MiB (for the MiB share).
constexpr double kPriorWeight = 1;

}  // namespace

void ClearCost::record(uint64_t iovecs, uint64_t bytes, uint64_t ns) {
  const double n = double(iovecs), m = double(bytes) / double(1 << 20), t = double(ns);
  nn_ = nn_ * kDecay + n * n;
  nm_ = nm_ * kDecay + n * m;
  mm_ = mm_ * kDecay + m * m;
  nt_ = nt_ * kDecay + n * t;
  mt_ = mt_ * kDecay + m * t;
  // Least squares of t = a n + b m, each share drawn toward the host's (ridge).
  const double a11 = nn_ + kPriorWeight, a22 = mm_ + kPriorWeight;
  const double r1 = nt_ + kPriorWeight * kHostIovecNs, r2 = mt_ + kPriorWeight * kHostMibNs;
  const double det = a11 * a22 - nm_ * nm_;  // > 0: the weights keep it so
  iovecNs_ = std::max(0.0, (r1 * a22 - nm_ * r2) / det);
  mibNs_ = std::max(0.0, (a11 * r2 - nm_ * r1) / det);
}

uint64_t ClearCost::mergeGap() const {
  if (mibNs_ <= 0) return kMaxGap;
  return std::min<uint64_t>(kMaxGap, static_cast<uint64_t>(iovecNs_ / mibNs_ * double(1 << 20)));
}

}  // namespace mtm::profiler
