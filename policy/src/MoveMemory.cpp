#include "mtm/policy/MoveMemory.h"

#include <algorithm>
#include <map>

namespace mtm::policy {
namespace {

constexpr uint32_t kMaxPingPongs = 6;

bool opposite(MoveKind a, MoveKind b) {
  return (a == MoveKind::Promotion && b == MoveKind::Demotion) || (a == MoveKind::Demotion && b == MoveKind::Promotion);
}

// The first record of pid that may overlap an address at or after `start`.
template <typename Map>
auto firstOverlapping(Map& records, int pid, uint64_t start) {
  auto it = records.upper_bound({pid, start});
  if (it != records.begin()) {
    auto prev = std::prev(it);
    if (prev->first.first == pid && prev->second.end > start) return prev;
  }
  return it;
}

// Calls fn(start, overlap, record) for each record of pid overlapping [start, end), in address
// order: the record's start, and how many bytes of [start, end) it covers.
template <typename Map, typename Fn>
void forOverlapping(Map& records, int pid, uint64_t start, uint64_t end, Fn fn) {
  for (auto it = firstOverlapping(records, pid, start); it != records.end() && it->first.first == pid && it->first.second < end; ++it)
    fn(it->first.second, std::min(end, it->second.end) - std::max(start, it->first.second), it->second);
}

}  // namespace

std::vector<MoveRecord> MoveMemory::overlapping(int pid, uint64_t start, uint64_t end) const {
  std::vector<MoveRecord> out;
  forOverlapping(records_, pid, start, end, [&](uint64_t, uint64_t, const MoveRecord& r) { out.push_back(r); });
  return out;
}

uint64_t MoveMemory::bytesWhere(int pid, uint64_t start, uint64_t end, const std::function<bool(const MoveRecord&)>& counts) const {
  uint64_t bytes = 0;
  forOverlapping(records_, pid, start, end, [&](uint64_t, uint64_t overlap, const MoveRecord& r) {
    if (counts(r)) bytes += overlap;
  });
  return bytes;
}

// The records overlapping [start, end): the bytes a move `kind` now would send back the way they
// came within the window (moves that proved right excepted), whether they are half the range,
// and the most ping-pongs that half the range has done.
MoveMemory::History MoveMemory::history(int pid, uint64_t start, uint64_t end, MoveKind kind, uint64_t now) const {
  History h;
  std::map<uint32_t, uint64_t> bytesAt;  // ping-pongs -> bytes
  forOverlapping(records_, pid, start, end, [&](uint64_t, uint64_t overlap, const MoveRecord& r) {
    if (opposite(r.kind, kind) && r.earned < 1 && now < r.interval + window_) h.backBytes += overlap;
    bytesAt[r.pingPongs] += overlap;
  });
  const uint64_t half = (end - start + 1) / 2;
  h.back = h.backBytes > 0 && h.backBytes >= half;
  uint64_t atLeast = 0;
  for (auto it = bytesAt.rbegin(); it != bytesAt.rend(); ++it)
    if ((atLeast += it->second) >= half) {
      h.pingPongs = it->first;
      break;
    }
  return h;
}

uint32_t MoveMemory::pingPongs(int pid, uint64_t start, uint64_t end) const {
  return history(pid, start, end, MoveKind::Manual, 0).pingPongs;
}

uint32_t MoveMemory::barDoublings(int pid, uint64_t start, uint64_t end, MoveKind kind, uint64_t now) const {
  const auto h = history(pid, start, end, kind, now);
  return h.pingPongs + (h.back ? 1 : 0);
}

uint64_t MoveMemory::record(int pid, uint64_t start, uint64_t end, MoveKind kind, int fromTier, int toTier, uint64_t now) {
  const auto h = history(pid, start, end, kind, now);
  erase(pid, start, end);
  records_[{pid, start}] = {end, now, kind, toTier, std::min(kMaxPingPongs, h.pingPongs + (h.back ? 1 : 0)), fromTier, 0};
  return h.backBytes;
}

void MoveMemory::credit(int pid, uint64_t start, uint64_t end, int tier, double hotness, double intervalShare, const MoveValue& value) {
  forOverlapping(records_, pid, start, end, [&](uint64_t from, uint64_t overlap, MoveRecord& r) {
    // (A record from before a reload may name a tier the map no longer has.)
    if (r.kind != MoveKind::Promotion || r.toTier != tier || r.fromTier <= tier || static_cast<size_t>(r.fromTier) >= value.tierCount())
      return;
    const double gain = value.accessGainNs(hotness, overlap, static_cast<size_t>(r.fromTier), static_cast<size_t>(tier)) * intervalShare;
    r.earned += gain / value.copyCostNs(r.end - from);
  });
}

void MoveMemory::creditCold(int pid, uint64_t start, uint64_t end, int tier, bool cold, double share) {
  forOverlapping(records_, pid, start, end, [&](uint64_t from, uint64_t overlap, MoveRecord& r) {
    if (r.kind != MoveKind::Demotion || r.toTier != tier || r.earned >= 1) return;
    r.earned = cold ? r.earned + share * double(overlap) / double(r.end - from) : 0;
  });
}

void MoveMemory::erase(int pid, uint64_t start, uint64_t end) {
  auto it = firstOverlapping(records_, pid, start);
  std::vector<std::pair<uint64_t, MoveRecord>> keep;  // the parts outside [start, end)
  while (it != records_.end() && it->first.first == pid && it->first.second < end) {
    const uint64_t s = it->first.second;
    const MoveRecord r = it->second;
    if (s < start) {
      MoveRecord before = r;
      before.end = start;
      keep.push_back({s, before});
    }
    if (r.end > end) keep.push_back({end, r});
    it = records_.erase(it);
  }
  for (auto& [s, r] : keep) records_[{pid, s}] = r;
}

void MoveMemory::forget(int pid) { records_.erase(records_.lower_bound({pid, 0}), records_.lower_bound({pid + 1, 0})); }

uint64_t MoveMemory::retention(const MoveRecord& r) const { return window_ << r.pingPongs; }

void MoveMemory::prune(const std::vector<profiler::RegionInfo>& regions, uint64_t now, size_t maxEntries) {
  // The live address ranges per process, to drop records of memory that is gone.
  std::vector<std::pair<int, std::pair<uint64_t, uint64_t>>> live;
  live.reserve(regions.size());
  for (const auto& r : regions) live.push_back({r.pid, {r.start, r.end}});
  std::sort(live.begin(), live.end());
  auto covered = [&](int pid, uint64_t start, uint64_t end) {
    auto it = std::lower_bound(live.begin(), live.end(), std::pair(pid, std::pair(end, uint64_t{0})));
    // The last live range starting before `end` is the only one that may reach past `start`
    // among those that start before it (ranges of one process are disjoint and sorted).
    return it != live.begin() && std::prev(it)->first == pid && std::prev(it)->second.second > start;
  };
  for (auto it = records_.begin(); it != records_.end();) {
    const auto& [key, r] = *it;
    if (now >= r.interval + retention(r) || !covered(key.first, key.second, r.end))
      it = records_.erase(it);
    else
      ++it;
  }
  if (records_.size() <= maxEntries) return;
  std::vector<std::pair<uint64_t, std::pair<int, uint64_t>>> byAge;
  for (const auto& [key, r] : records_) byAge.push_back({r.interval, key});
  std::nth_element(byAge.begin(), byAge.begin() + static_cast<std::ptrdiff_t>(byAge.size() - maxEntries), byAge.end());
  for (size_t i = 0; i < byAge.size() - maxEntries; ++i) records_.erase(byAge[i].second);
}

}  // namespace mtm::policy
