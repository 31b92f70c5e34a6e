#pragma once
// The move_pages(2) mover: batched, optionally threaded, paced to a byte rate and a page budget,
// retrying temporary failures, falling back to the next node when the destination is full, and
// cancelling when the process exits. Dry-run queries placement and moves nothing.

#include "mtm/migrate/Mover.h"

namespace mtm::migrate {

class MovePagesMover final : public Mover {
 public:
  explicit MovePagesMover(Context context) : ctx_(std::move(context)) {}
  MoveStats execute(const std::vector<MoveRequest>& requests, const ProgressFn& progress = {}) override;

 private:
  Context ctx_;
};

}  // namespace mtm::migrate
