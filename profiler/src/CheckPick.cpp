#include "mtm/profiler/CheckPick.h"

#include <algorithm>

namespace mtm::profiler {

// The sweep's start is random: from a fixed one, the same regions lost the rounding every
// interval while the region set stood still -- with fewer checks than regions some were never
// checked, and a settled hot region's confidence, and with it its rank, decayed to nothing.
std::vector<uint64_t> pickChecks(const RegionSet& regions, uint64_t checks, std::mt19937_64& rng) {
  const auto& rs = regions.regions();
  std::vector<uint64_t> out;
  if (rs.empty() || checks == 0) return out;
  double totalVariation = 0, totalBytes = 0;
  for (const auto& r : rs) {
    totalVariation += r.variation;
    totalBytes += double(r.size());
  }
  // One check a region where the budget holds two; below that, half the checks go one a region
  // and half by size and variation: spread evenly over all regions, a budget smaller than the
  // region count checked a 4 KiB stack as often as the 72 MiB region a new hot set had moved
  // into (VM lab: 16 checks an interval over 27 regions; the set was found 8 s late).
  const double base = std::min(1.0, double(checks) / (2.0 * double(rs.size())));
  const double rest = std::max(0.0, double(checks) - base * double(rs.size()));
  std::vector<double> shares;
  std::vector<uint64_t> units;  // per region: its pages, or its 2 MiB units where THP-backed
  double excess = 0, roomyBytes = 0;
  for (const auto& r : rs) {
    double share = base + rest / 2 * double(r.size()) / totalBytes;
    share += rest / 2 * (totalVariation > 0 ? r.variation / totalVariation : double(r.size()) / totalBytes);
    units.push_back(std::max<uint64_t>(1, r.size() / (r.huge ? kHuge : kPage)));
    if (share >= double(units.back())) {
      excess += share - double(units.back());
      share = double(units.back());
    } else {
      roomyBytes += double(r.size());
    }
    shares.push_back(share);
  }
  // A share beyond a region's units goes to the others by size: a small region that varies (a
  // stack) drew a quarter of a small budget and lost what it could not use.
  if (excess > 0 && roomyBytes > 0)
    for (size_t i = 0; i < rs.size(); ++i)
      if (shares[i] < double(units[i])) shares[i] += excess * double(rs[i].size()) / roomyBytes;
  double carry = std::uniform_real_distribution<double>(0, 1)(rng);
  for (size_t i = 0; i < rs.size(); ++i) {
    const auto& r = rs[i];
    carry += shares[i];
    uint64_t n = static_cast<uint64_t>(carry);
    carry -= double(n);
    if (n == 0) continue;
    const uint64_t unit = r.huge ? kHuge : kPage;
    if (n >= units[i]) {
      for (uint64_t k = 0; k < units[i]; ++k) out.push_back(r.start + k * unit);
      continue;
    }
    std::uniform_int_distribution<uint64_t> d(0, units[i] - 1);
    for (uint64_t k = 0; k < n; ++k) out.push_back(r.start + d(rng) * unit);
  }
  return out;
}

}  // namespace mtm::profiler
