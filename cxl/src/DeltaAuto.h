#pragma once
// delta publish's `auto`, the part that weighs time (docs/cxlccl.md, "Delta publish"): per
// mirror, the average time of a call by ring and of a call as changed lines, and after each call
// what the writer does next. The share rule and the back-off ladder stay in DeltaState.

#include <cstdint>

namespace cxlccl {

// How a writer sends its block this call (DeltaAnnouncement::mode).
enum class DeltaSend : std::uint64_t { ring = 0, full = 1, lines = 2 };

// After a call as lines: stay on lines, back off to the ring, or send one call by ring to time it.
enum class AutoStep { stay, backOff, timeRing };

struct AutoTiming {
  // auto, timed: a compare that found more than this share of lines changed, or calls as lines
  // this much slower than by ring, send the next calls by ring (whose way back costs a whole copy
  // into the mirror, and this machine's copies vary by more than 10% from minute to minute).
  static constexpr double kCrossover = 0.05;
  static constexpr double kSlowerBy = 1.15;
  // After this many calls as lines in a row, the ring is timed again: a machine's speed changes.
  static constexpr int kRetimeCalls = 256;

  double ringSeconds = 0;  // averages (0: none yet)
  double lineSeconds = 0;
  bool timedRing = false;  // calls were sent by ring to time them
  int linesInARow = 0;     // calls as lines since the ring was last timed or chosen
  DeltaSend lastSend = DeltaSend::full;

  // Records a call that went `send` in `seconds` (`share`: of lines its compare found changed).
  // The first call by ring after calls through the mirror pays for the switch and is no sample.
  // For a call as lines, says what comes next: `timed` false decides by the share alone.
  AutoStep after(DeltaSend send, double seconds, double share, bool timed);
};

}  // namespace cxlccl
