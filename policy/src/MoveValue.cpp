#include "mtm/policy/MoveValue.h"

#include <algorithm>
#include <cmath>

#include "mtm/MoveRequest.h"

namespace mtm::policy {
namespace {

// A check that finds a page accessed every time says only "at least once a window": capped,
// the rate stays finite.
constexpr double kMaxHotness = 0.999;
constexpr double kNsPerDistanceUnit = 10;  // SLIT 10 (local) ~ 100 ns
constexpr double kLocalNs = 100;

}  // namespace

std::vector<double> tierLatencyNs(const config::TierMap& tiers) {
  std::vector<double> out;
  const auto all = [&](auto has) { return std::all_of(tiers.tiers.begin(), tiers.tiers.end(), has); };
  if (all([](const config::Tier& t) { return t.readLatencyNs.has_value(); })) {
    for (const auto& t : tiers.tiers) out.push_back(double(*t.readLatencyNs));
  } else if (all([](const config::Tier& t) { return t.minDistance.has_value(); })) {
    for (const auto& t : tiers.tiers) out.push_back(double(*t.minDistance) * kNsPerDistanceUnit);
  } else {
    for (size_t i = 0; i < tiers.tiers.size(); ++i) out.push_back(kLocalNs * double(1u << std::min<size_t>(i, 16)));
  }
  return out;
}

double effectiveHotness(const profiler::RegionInfo& r) {
  const double c = std::max(0.0, r.confidence);
  return std::clamp(r.hotness, 0.0, 1.0) * c / (c + 1);
}

MoveValue::MoveValue(const config::Config& config, const config::TierMap& tiers)
    : latencyNs_(tierLatencyNs(tiers)),
      windowS_(double(std::max<uint32_t>(1, config.profiler.abitWindowMs ? config.profiler.abitWindowMs : config.profiler.intervalMs)) /
               1000),
      horizonS_(double(config.policy.horizonS)) {
  nsPerByte_ = 1e9 / double(std::max<uint64_t>(1, config.migration.maxRateBytes));
}

double MoveValue::accessGainNs(double hotness, uint64_t bytes, size_t from, size_t to) const {
  const double p = std::min(hotness, kMaxHotness);
  const double perPageRate = -std::log1p(-p) / windowS_;  // accesses per second
  const double pages = double(bytes) / double(kPageSize);
  return pages * perPageRate * horizonS_ * (latencyNs_[from] - latencyNs_[to]);
}

double MoveValue::copyCostNs(uint64_t bytes) const { return double(bytes) * nsPerByte_; }

}  // namespace mtm::policy
