#pragma once
// The move_pages(2) mover: batched, optionally threaded, paced to a byte rate and a page budget,
// retrying temporary failures, falling back to the next node when the destination is full, and
// cancelling when the process exits. Dry-run queries placement and moves nothing.

#include "mtm/migrate/Mover.h"

namespace mtm::migrate {

class MovePagesMover final : public Mover {
 public:
  explicit MovePagesMover(Context context) : ctx_(std::move(context)), pacer_(ctx_.options.maxRateBytes, ctx_.options.burst) {}
  MoveStats execute(const std::vector<MoveRequest>& requests, const ProgressFn& progress = {}) override;

 private:
  Context ctx_;
  // One for all calls: migration.max_rate holds over a run of calls (mtmd runs an interval's
  // moves in turns, a call each), not per call with a burst each.
  Pacer pacer_;
};

}  // namespace mtm::migrate
