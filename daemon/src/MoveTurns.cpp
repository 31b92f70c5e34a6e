#include "mtm/daemon/MoveTurns.h"

#include <algorithm>

namespace mtm::daemon {

std::vector<MoveRequest> cutIntoTurns(const std::vector<MoveRequest>& requests, uint64_t maxBytes) {
  maxBytes = std::max(kThpSize, maxBytes & ~(kThpSize - 1));
  std::vector<MoveRequest> pieces;
  for (const auto& r : requests) {
    MoveRequest piece = r;
    piece.ranges.clear();
    uint64_t bytes = 0;
    const auto close = [&] {
      if (!piece.ranges.empty()) pieces.push_back(piece);
      piece.ranges.clear();
      bytes = 0;
    };
    for (AddressRange range : r.ranges) {
      while (range.start < range.end) {
        uint64_t stop = std::min(range.end, range.start + (maxBytes - bytes));
        if (stop < range.end) {
          // The cut goes back to a 2 MiB boundary; with none in what the piece has room for, the
          // range starts the next piece (whose room, a multiple of 2 MiB, holds one).
          const uint64_t aligned = stop & ~(kThpSize - 1);
          if (aligned <= range.start) {
            close();
            continue;
          }
          stop = aligned;
        }
        piece.ranges.push_back({range.start, stop});
        bytes += stop - range.start;
        range.start = stop;
        if (range.start < range.end || bytes == maxBytes) close();
      }
    }
    close();
  }
  return pieces;
}

void runInTurns(migrate::Mover& mover, const std::vector<MoveRequest>& demotions, const std::vector<MoveRequest>& promotions,
                MoveStats& demoted, MoveStats& promoted) {
  size_t down = 0, up = 0;
  uint64_t freed = 0, taken = 0;
  while (down < demotions.size() || up < promotions.size()) {
    const bool promote = up < promotions.size() && (down == demotions.size() || taken + bytesOf(promotions[up].ranges) <= freed);
    if (promote) {
      taken += bytesOf(promotions[up].ranges);
      promoted.add(mover.execute({promotions[up++]}));
    } else {
      freed += bytesOf(demotions[down].ranges);
      demoted.add(mover.execute({demotions[down++]}));
    }
  }
}

}  // namespace mtm::daemon
