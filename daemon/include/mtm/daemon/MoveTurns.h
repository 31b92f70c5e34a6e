#pragma once
// An interval's demotions and promotions, run in turns of a few MiB: each promotion goes once
// the demotions before it have freed as much as it and the promotions before it take. Run one
// list after the other, a swap took the memory going down away whole before any of the memory
// coming up arrived (VM lab: a 64 MiB set left the top tier in half a second, and the next one
// came in the half second after it); in turns the one leaves as the other arrives.

#include <cstdint>
#include <vector>

#include "mtm/MoveRequest.h"
#include "mtm/migrate/Mover.h"

namespace mtm::daemon {

// The bytes of a turn: large enough that a mover call's own cost (reading the process's maps)
// stays small next to its copying, small enough that a swap takes many turns.
inline constexpr uint64_t kTurnBytes = 8ull << 20;

// The requests cut into pieces of at most `maxBytes` (a multiple of 2 MiB), in order: every cut
// on a 2 MiB boundary, so that no THP is cut; each piece keeps its request's other fields.
std::vector<MoveRequest> cutIntoTurns(const std::vector<MoveRequest>& requests, uint64_t maxBytes = kTurnBytes);

// Runs `demotions` and `promotions` (pieces, as above) through `mover` in turns, their stats
// added to `demoted` and `promoted` in the order of each list.
void runInTurns(migrate::Mover& mover, const std::vector<MoveRequest>& demotions, const std::vector<MoveRequest>& promotions,
                MoveStats& demoted, MoveStats& promoted);

}  // namespace mtm::daemon
