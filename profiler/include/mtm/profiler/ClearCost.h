#pragma once
// What clearing accessed bits costs on this machine, learned from the clears themselves: a
// share per iovec (a walk and a TLB flush on the CPUs that run the target) and a share per MiB
// (each young page's bit and its move on the LRU), fitted by least squares over the recent
// clears, drawn toward the host's figures while few are known. Two sampled ranges are cleared
// as one iovec, the gap between them and all, where the gap costs less than the iovec saved.
// Measured: on the host ~25 us an iovec, ~8 us a MiB (gaps up to 3 MiB pay); in the
// TCG-emulated VM lab ~36 us an iovec, ~180 us a MiB, so 3 MiB gaps made most of the cost.

#include <cstdint>

namespace mtm::profiler {

class ClearCost {
 public:
  static constexpr double kHostIovecNs = 25000, kHostMibNs = 8000;
  static constexpr uint64_t kMaxGap = 3ull << 20;  // beyond, a gap's pages lose their LRU place for little

  // One clear: `iovecs` ranges of `bytes` in all took `ns` of CPU time.
  void record(uint64_t iovecs, uint64_t bytes, uint64_t ns);
  double iovecNs() const { return iovecNs_; }
  double mibNs() const { return mibNs_; }
  // The widest gap between two ranges that is cheaper to clear than a second iovec.
  uint64_t mergeGap() const;

 private:
  // Sums over the recent clears, each older one weighing kDecay as much as the one after it:
  // n = iovecs, m = MiB, t = ns.
  static constexpr double kDecay = 0.95;
  double nn_ = 0, nm_ = 0, mm_ = 0, nt_ = 0, mt_ = 0;
  double iovecNs_ = kHostIovecNs, mibNs_ = kHostMibNs;
};

}  // namespace mtm::profiler
