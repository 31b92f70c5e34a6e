#pragma once
// What a mover is asked to do and what it reports back.

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "mtm/Pidfd.h"

namespace mtm {

inline constexpr uint64_t kPageSize = 4096;
inline constexpr uint64_t kThpSize = 2ull << 20;

struct AddressRange {
  uint64_t start = 0;  // [start, end)
  uint64_t end = 0;
  bool operator==(const AddressRange&) const = default;
};

// The bytes the ranges span, summed.
uint64_t bytesOf(const std::vector<AddressRange>& ranges);

enum class MoveKind { Promotion, Demotion, Manual };

struct MoveRequest {
  int pid = 0;
  std::vector<AddressRange> ranges;
  int toNode = -1;
  std::vector<int> fallbackNodes;  // tried in order while the destination is full (ENOMEM)
  // Pages found on these nodes stay where they are: a promotion lists the faster tiers' nodes, a
  // demotion the slower ones', so that neither moves a page the wrong way (a region that holds
  // memory on two nodes). The mover asks where the pages are first. Empty: every page moves.
  std::vector<int> stayNodes;
  MoveKind kind = MoveKind::Manual;
  // A THP that a range covers only partly: false moves it whole, true splits it and moves
  // only the covered 4 KiB pages.
  bool splitPartialThps = false;
  // The process's pidfd where the caller holds one (mtmd does, per target); else the mover
  // opens its own for the call.
  SharedPidfd pidfd;
};

// A stretch of one request's pages that now lie on one node -- moved there, or found there and
// left (stay nodes) -- from its first page to the end of its last; node -1: pages the kernel
// found not present (ENOENT). Other failed pages belong to no stretch, and one may span them.
struct Landing {
  size_t request = 0;  // index in the requests given
  uint64_t start = 0, end = 0;
  int node = -1;
  bool operator==(const Landing&) const = default;
};

// Outcomes, in 4 KiB pages (a THP counts 512). Every requested page ends in exactly one of
// moved, stayed, failed (by errno), deferred (budget) or cancelled (target exited).
struct MoveStats {
  uint64_t pagesRequested = 0;
  uint64_t pagesMoved = 0;         // now on the destination or a fallback node
  uint64_t pagesToFallback = 0;    // of pagesMoved: on a fallback node
  uint64_t pagesStayed = 0;        // found on one of the request's stayNodes: not moved
  std::map<int, uint64_t> failed;  // errno -> pages: EBUSY, ENOMEM, EACCES, EFAULT, ENOENT, ...
  uint64_t pagesDeferred = 0;      // over the page budget: not attempted
  uint64_t pagesCancelled = 0;     // not attempted: the process exited, or its moves were cancelled
  uint64_t pagesWouldMove = 0;     // dry run: on another node now
  uint64_t pagesAlreadyThere = 0;  // dry run: on the destination already
  uint64_t retries = 0;            // pages passed to move_pages again
  uint64_t calls = 0;              // move_pages calls
  uint64_t thpMovedWhole = 0;
  uint64_t thpSplit = 0;
  uint64_t thpCollapsed = 0;
  uint64_t hugetlbMoved = 0;
  std::chrono::nanoseconds elapsed{0};
  std::vector<std::string> errors;  // whole-request failures, with context
  // Per request, in the order given: the node that now holds most of its requested pages, or -1
  // when no node got half of them (failures, cancellations, pages spread over fallbacks, a dry
  // run). Empty from a mover that does not say.
  std::vector<int> landedNodes;
  // Where the pages went, stretch by stretch, requests in the order they ran and each in address
  // order. A stretch under kMinLanding joins its neighbour: the two count as one, on the node of
  // the longer. Empty from a dry run or a mover that does not say.
  std::vector<Landing> landings;
  static constexpr uint64_t kMinLanding = 2ull << 20;

  uint64_t pagesFailed() const;
  double bytesPerSecond() const;
  void add(const MoveStats& other);
};

// "EBUSY" for EBUSY; "errno N" for the rest.
std::string errnoName(int err);

}  // namespace mtm
