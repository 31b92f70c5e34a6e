#pragma once
// Whether a region's access changed: a run of checks with one outcome that its history makes
// unlikely. Hotness is a decayed mean, so after a phase change it needs several intervals to
// cross a threshold (with decay 0.5, four for a hot set to read cold); when the run itself is
// the evidence -- two misses in a row where twenty checks before found the page accessed every
// time -- the region's hotness starts again from the run.

#include <cstdint>

namespace mtm::profiler {

struct CheckHistory {
  double hits = 0, misses = 0;              // all checks, decayed by kHistoryDecay an interval
  double beforeHits = 0, beforeMisses = 0;  // the same as the current run began
  double run = 0;                           // checks in a row with one outcome, over intervals
  bool runAccessed = false;

  // Weight an interval leaves on the history's checks: about twenty intervals of memory.
  static constexpr double kHistoryDecay = 0.95;
  // A run against what the history found more often, whose probability under that history (its
  // Beta-binomial predictive, from the decayed counts with a uniform prior) is below this, is a
  // change; never a run of one check. Twenty hits before, two misses: 0.004. Four hits in five
  // before: four misses (0.006; their chance there is 0.0016). Half and half: nine (0.006).
  static constexpr double kChangeLikelihood = 0.01;

  // Folds one interval's checks in (call once per interval, with or without checks). True when
  // they complete a change: the history then holds the run alone, so the caller restarts the
  // region's hotness from it (runAccessed says which way).
  bool note(uint32_t checked, uint32_t accessed);
  // Scaled for a part of the region (its share of the bytes); a part with no run of its own.
  CheckHistory share(double fraction) const;
  // Two neighbours' histories as one region's.
  void absorb(const CheckHistory& other);

 private:
  bool runIsUnlikely() const;
};

}  // namespace mtm::profiler
