#include "mtm/profiler/ChangeTest.h"

namespace mtm::profiler {

bool CheckHistory::note(uint32_t checked, uint32_t accessed) {
  hits *= kHistoryDecay;
  misses *= kHistoryDecay;
  if (checked == 0) return false;
  const bool pure = accessed == 0 || accessed == checked;
  const bool allAccessed = accessed == checked;
  if (!pure) {
    run = 0;
  } else if (run > 0 && allAccessed == runAccessed) {
    run += checked;
  } else {
    beforeHits = hits;
    beforeMisses = misses;
    run = checked;
    runAccessed = allAccessed;
  }
  hits += accessed;
  misses += checked - accessed;
  if (!pure || !runIsUnlikely()) return false;
  hits = runAccessed ? run : 0;
  misses = runAccessed ? 0 : run;
  beforeHits = beforeMisses = 0;
  return true;
}

bool CheckHistory::runIsUnlikely() const {
  // Only a run against what the history found more often breaks with it: a run of the usual
  // outcome (or of either, with no history) is more of the same, however long.
  const double same = runAccessed ? beforeHits : beforeMisses, other = runAccessed ? beforeMisses : beforeHits;
  if (same >= other) return false;
  double p = 1;
  for (double j = 0; j < run; ++j) {
    p *= (same + 1 + j) / (same + other + 2 + j);
    if (j >= 1 && p < kChangeLikelihood) return true;  // one check alone is never a change
  }
  return false;
}

CheckHistory CheckHistory::share(double fraction) const {
  CheckHistory h;
  h.hits = hits * fraction;
  h.misses = misses * fraction;
  return h;
}

void CheckHistory::absorb(const CheckHistory& other) {
  const bool sameRun = run > 0 && other.run > 0 && runAccessed == other.runAccessed;
  hits += other.hits;
  misses += other.misses;
  beforeHits += other.beforeHits;
  beforeMisses += other.beforeMisses;
  run = sameRun ? run + other.run : 0;
}

}  // namespace mtm::profiler
