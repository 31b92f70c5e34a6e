#include "DeltaAuto.h"

namespace cxlccl {

AutoStep AutoTiming::after(DeltaSend send, double seconds, double share, bool timed) {
  auto average = [seconds](double* mean) { *mean = *mean == 0 ? seconds : 0.75 * *mean + 0.25 * seconds; };
  const bool switched = send != lastSend;
  lastSend = send;
  if (send == DeltaSend::ring && !switched) average(&ringSeconds);
  if (send != DeltaSend::lines) return AutoStep::stay;
  // Calls as lines are timed where the share leaves the choice open.
  const bool sparse = share <= kCrossover;
  if (sparse) average(&lineSeconds);
  if (timed && ++linesInARow >= kRetimeCalls) {
    linesInARow = 0;
    ringSeconds = 0;
    timedRing = false;
  }
  if (!sparse || (timed && ringSeconds > 0 && lineSeconds > kSlowerBy * ringSeconds)) {
    linesInARow = 0;
    return AutoStep::backOff;
  }
  if (timed && ringSeconds == 0 && !timedRing) {
    timedRing = true;
    return AutoStep::timeRing;
  }
  return AutoStep::stay;
}

}  // namespace cxlccl
