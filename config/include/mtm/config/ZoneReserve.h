#pragma once
// The free memory the kernel keeps for itself on each node, from /proc/zoneinfo. A page
// allocation for a process (a migration target included) is served by a zone at once, without
// waking kswapd, only while the zone keeps more free pages than its low watermark (+ any boost)
// plus its lowmem reserve against the highest zone the allocation may use (the largest entry of
// `protection`). Below that the kernel reclaims -- or, for move_pages(2) onto one node, often
// fails with ENOMEM. `mtmctl tiers` shows it, and notes a tier whose low watermark lies below it.
// (With THP enabled the kernel raises min_free_kbytes, and this is several percent of a node:
// 16 MiB of a 256 MiB VM-lab node.)

#include <cstdint>
#include <map>
#include <string_view>

#include "mtm/KernelFs.h"
#include "mtm/Result.h"

namespace mtm::config {

// Node -> bytes: for each zone with managed pages, low + boost + max(protection), in pages of
// `pageBytes`. Zones without managed pages are left out (the kernel lists them, with watermarks).
std::map<int, uint64_t> parseZoneReserves(std::string_view zoneinfo, uint64_t pageBytes);

// The same, read from /proc/zoneinfo now.
Result<std::map<int, uint64_t>> readZoneReserves(const KernelFs& fs);

}  // namespace mtm::config
