#pragma once
// How migration outcomes and page placement are shown: text, JSON or CSV from one definition.

#include <string>

#include "mtm/MoveRequest.h"
#include "mtm/Table.h"
#include "mtm/config/TierMap.h"
#include "mtm/migrate/Placement.h"

namespace mtm::daemon {

std::string renderMoveStats(const MoveStats& stats, Format format);
std::string renderPlacement(const migrate::Placement& placement, const config::TierMap& tiers, Format format);

}  // namespace mtm::daemon
