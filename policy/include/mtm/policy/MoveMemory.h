#pragma once
// What the MTM policy remembers of its own moves, keyed by address range (not by region:
// regions split and merge, so a region's start says nothing a few intervals later). Each entry
// is a range of one process that was last moved as a whole: when, which way and to which tier,
// and how often it went back the way it came within the ping-pong window. Ranges of one process
// never overlap: a new move overwrites the parts of older entries it covers. A range's history
// is what holds for half its bytes or more: the profiler merges memory that lies together, and a
// few MiB that flip between tiers must not stand for the 64 MiB they were merged into (in the VM
// lab such a 2 MiB piece, moved with a phase's memory, gave all of it its 4 ping-pongs, and the
// phase's memory waited 48 s in tier 1).
//
// Bounded: forget() drops a process that exited or was detached; prune() drops entries past
// their retention (a range that ping-ponged is kept longer, so its raised bar holds) and those
// that no live region overlaps, and caps the entry count.

#include <cstdint>
#include <functional>
#include <map>
#include <utility>
#include <vector>

#include "mtm/MoveRequest.h"
#include "mtm/policy/MoveValue.h"
#include "mtm/profiler/Snapshot.h"

namespace mtm::policy {

struct MoveRecord {
  uint64_t end = 0;
  uint64_t interval = 0;  // when it was planned
  MoveKind kind = MoveKind::Manual;
  int toTier = -1;
  uint32_t pingPongs = 0;  // moves back the way it came, each within the window of the one before
  int fromTier = -1;
  // How far the move has proved right, 1 = proved: a promotion, the share of its copy that its
  // accesses have earned back since; a demotion, the share of a cooldown it has stayed cold since.
  double earned = 0;
};

class MoveMemory {
 public:
  // `window`: intervals within which a move back counts as ping-pong.
  explicit MoveMemory(uint64_t window) : window_(window) {}

  // The records overlapping [start, end) of pid, in address order.
  std::vector<MoveRecord> overlapping(int pid, uint64_t start, uint64_t end) const;
  // The bytes of [start, end) of pid whose records `counts`.
  uint64_t bytesWhere(int pid, uint64_t start, uint64_t end, const std::function<bool(const MoveRecord&)>& counts) const;

  // The most ping-pongs that half of [start, end) or more has done.
  uint32_t pingPongs(int pid, uint64_t start, uint64_t end) const;
  // How often the bar of a move of [start, end) `kind` now doubles: pingPongs(), and once more
  // where the move would be one (half of the range or more going back the way it came within the
  // window).
  uint32_t barDoublings(int pid, uint64_t start, uint64_t end, MoveKind kind, uint64_t now) const;

  // Remembers a committed move; returns the bytes of it that went back the way they came within
  // the window (counted as a ping-pong on the range when they are half of it or more).
  uint64_t record(int pid, uint64_t start, uint64_t end, MoveKind kind, int fromTier, int toTier, uint64_t now);
  // Credits the promoted ranges overlapping [start, end) that are still in `tier`, where they went,
  // with one interval's accesses at `hotness` (effective): `intervalShare` of the gain MoveValue
  // expects over its horizon, against their copy. A move back after a promotion has earned its copy
  // back is no ping-pong: the memory was hot while it stayed (a phase shorter than the window),
  // where a range that flips by chance goes back before it earns anything.
  void credit(int pid, uint64_t start, uint64_t end, int tier, double hotness, double intervalShare, const MoveValue& value);
  // Credits the demoted ranges overlapping [start, end) that are still in `tier`, where they went,
  // with one interval: `cold` adds `share` (of the range's bytes, for the overlap), a warm
  // interval starts them over until they have proved right. A move back after a demotion stayed
  // cold for a cooldown is no ping-pong: its hot set went away and came back (a recurring phase),
  // where a range between reads goes back before it has been cold that long.
  void creditCold(int pid, uint64_t start, uint64_t end, int tier, bool cold, double share);

  void forget(int pid);
  // Drops records older than their retention, those no region of `regions` overlaps, and the
  // oldest beyond `maxEntries`.
  void prune(const std::vector<profiler::RegionInfo>& regions, uint64_t now, size_t maxEntries);

  size_t size() const { return records_.size(); }
  uint64_t window() const { return window_; }
  // Intervals a record is kept after its move: the window, doubled for each ping-pong.
  uint64_t retention(const MoveRecord& r) const;

 private:
  struct History {
    uint64_t backBytes = 0;  // going back the way they came within the window
    bool back = false;       // half the range or more
    uint32_t pingPongs = 0;  // the most that half the range or more has done
  };
  History history(int pid, uint64_t start, uint64_t end, MoveKind kind, uint64_t now) const;
  // Removes [start, end) of pid from the records, keeping the parts of records outside it.
  void erase(int pid, uint64_t start, uint64_t end);
  uint64_t window_;
  std::map<std::pair<int, uint64_t>, MoveRecord> records_;  // (pid, start) -> record
};

}  // namespace mtm::policy
