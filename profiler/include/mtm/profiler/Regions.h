#pragma once
// A process's address space as regions that split where access varies and merge where it does
// not. THP-backed memory is profiled at 2 MiB: a region never half-covers a THP.

#include <array>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "mtm/ProcMaps.h"
#include "mtm/config/Config.h"
#include "mtm/profiler/ChangeTest.h"

namespace mtm::profiler {

inline constexpr uint64_t kPage = 4096;
inline constexpr uint64_t kHuge = 2ull << 20;

// What an observation is: a THP's accessed bit (pmd) says nothing of where inside the THP; a 4 KiB
// PTE's (pte) and an access sample's address (exact: PEBS/IBS) say where. A page fault's address
// (fault) is exact too, but faults come at first touch and after moves -- once per THP, at its
// first-touched byte -- not where access goes: they tell nothing of a THP's skew.
enum class Mapping { exact, pte, pmd, fault };

struct Region {
  uint64_t start = 0, end = 0;  // [start, end)
  bool huge = false;            // seen THP-backed: sampled and split at 2 MiB
  double hotness = 0;           // decayed fraction of checks that found it accessed, [0, 1]
  double lastFraction = 0;      // the latest interval's fraction
  double confidence = 0;        // decayed number of checks behind `hotness`
  CheckHistory history;         // longer memory of its checks: tells a change from chance
  double variation = 0;         // spatial + temporal variation: where checks go next
  uint32_t age = 0;             // intervals since it was formed (split or merged)
  int node = -1;                // node holding most of its checked pages
  // This interval's observations, the lower and upper half apart (for split decisions).
  uint32_t checked[2] = {0, 0};
  uint32_t accessed[2] = {0, 0};
  std::map<int, uint32_t> nodeVotes;
  uint32_t sawPmd = 0, sawPte = 0;                 // this interval's accessed-bit checks by mapping
  uint32_t faults = 0;                             // this interval's page-fault samples (all accessed)
  uint32_t pteOnlyIntervals = 0;                   // in a row: checks found 4 KiB PTEs and no THP
  std::vector<std::pair<uint64_t, bool>> samples;  // this interval's checks: (address, accessed)
  // Accessed samples with exact addresses per eighth of the region, decayed like hotness (a
  // THP's accessed bit covers it whole: only samples say how its subpages differ).
  std::array<double, 8> eighths{};
  double skew = -1;  // see Snapshot.h; -1: unknown
  uint8_t hotEighths = 0;

  uint64_t size() const { return end - start; }
  uint64_t mid() const;  // the split point: the middle, aligned to 2 MiB (huge) or a page
};

struct RegionStats {
  uint32_t splits = 0, merges = 0;
  uint32_t changes = 0;  // regions whose hotness started again from a run of checks (ChangeTest.h)
};

class RegionSet {
 public:
  explicit RegionSet(const config::ProfilerConfig& config) : config_(config) {}

  // (Re)builds from the process's VMAs; regions that survive keep their history. VMAs that
  // hold no anonymous or private writable memory ([vdso], read-only text, ...) are left out.
  void rebuild(const std::vector<Vma>& vmas);

  // One observation of the page at `addr`: checked, and whether it was accessed. A region seen
  // through THP accessed bits is huge; one whose checks then find 4 KiB PTEs only (the THP was
  // split) is not any more.
  void observe(uint64_t addr, bool accessed, int node = -1, Mapping mapping = Mapping::exact);
  // Precise samples a region's skew needs before it is believed.
  static constexpr double kSkewSamples = 16;
  // How far (z score) a run of checks must stand out from the rest of its region to be cut out.
  static constexpr double kSplitScore = 2.5;
  // Intervals in a row whose checks find only 4 KiB PTEs before a huge region is not any more.
  static constexpr uint32_t kPteOnlyIntervals = 3;

  // An observation of a whole range at once (DAMON): each region it overlaps counts it as
  // kRangeWeight checks, `fraction` of them accessed.
  void observeRange(uint64_t start, uint64_t end, double fraction);
  static constexpr uint32_t kRangeWeight = 8;

  // Closes the interval: hotness, variation and age; splits regions whose halves disagree and
  // merges similar neighbours. Clears the interval's observations.
  RegionStats endInterval();

  // Cuts the region around `addr` in two there, both parts keeping its history (false: `addr`
  // is a boundary already, inside no region, not 2 MiB-aligned in a huge region, or the
  // region count is at profiler.max_regions). For a policy that moved only part of a region:
  // the parts now lie on different nodes, and each is ranked and moved on its own from then on.
  bool cutAt(uint64_t addr);
  // A mover put [start, end) on `node`: each region that lies half or more inside it is on that
  // node now, whatever this interval's checks -- taken before the move -- say. Until a check
  // lands in it a region otherwise keeps the node it had: a policy would see memory it has just
  // moved where it was, and hold or move it again. A region the range covers in part is cut at
  // the range's edge first (where cutAt can): regions merged while the move ran would otherwise
  // hold memory on two nodes, and a node read from a few checks could send the fast part down.
  void noteNode(uint64_t start, uint64_t end, int node);

  const std::vector<Region>& regions() const { return regions_; }
  std::vector<Region>& regions() { return regions_; }
  uint64_t bytes() const;
  Region* find(uint64_t addr);

 private:
  void splitAndMerge(RegionStats& stats);
  // Cuts out of `r` the run of checks that stands out most from the rest (one cut or two),
  // recursively; appends the parts.
  void split(Region r, std::vector<Region>& out, RegionStats& stats, size_t budget);
  const config::ProfilerConfig& config_;
  std::vector<Region> regions_;  // sorted, disjoint
};

// Whether a VMA is worth profiling: private writable or anonymous memory.
bool profiled(const Vma& vma);

}  // namespace mtm::profiler
