#pragma once
// Where an interval's page checks go.

#include <cstdint>
#include <random>
#include <vector>

#include "mtm/profiler/Regions.h"

namespace mtm::profiler {

// `checks` addresses spread over the regions (MTM principle 1): one each where the budget
// allows two (else half the checks, evenly), the rest half by size, half by variation. Within a
// region: random units (4 KiB pages, or 2 MiB in THP-backed regions), or all of them where the
// share covers them all. Fractional shares are rounded by one sweep from a random start, so
// each region gets its share on average and exactly `checks` addresses come back (a share beyond
// a region's units goes to the others by size; fewer only where all regions together have fewer
// units).
std::vector<uint64_t> pickChecks(const RegionSet& regions, uint64_t checks, std::mt19937_64& rng);

}  // namespace mtm::profiler
