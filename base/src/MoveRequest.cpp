#include "mtm/MoveRequest.h"

#include <cerrno>

namespace mtm {

uint64_t MoveStats::pagesFailed() const {
  uint64_t n = 0;
  for (const auto& [err, pages] : failed) n += pages;
  return n;
}

uint64_t bytesOf(const std::vector<AddressRange>& ranges) {
  uint64_t n = 0;
  for (const auto& r : ranges) n += r.end - r.start;
  return n;
}

double MoveStats::bytesPerSecond() const {
  const double s = std::chrono::duration<double>(elapsed).count();
  return s > 0 ? static_cast<double>(pagesMoved * kPageSize) / s : 0;
}

void MoveStats::add(const MoveStats& o) {
  pagesRequested += o.pagesRequested;
  pagesMoved += o.pagesMoved;
  pagesToFallback += o.pagesToFallback;
  for (const auto& [err, pages] : o.failed) failed[err] += pages;
  pagesDeferred += o.pagesDeferred;
  pagesCancelled += o.pagesCancelled;
  pagesStayed += o.pagesStayed;
  pagesWouldMove += o.pagesWouldMove;
  pagesAlreadyThere += o.pagesAlreadyThere;
  retries += o.retries;
  calls += o.calls;
  thpMovedWhole += o.thpMovedWhole;
  thpSplit += o.thpSplit;
  thpCollapsed += o.thpCollapsed;
  hugetlbMoved += o.hugetlbMoved;
  elapsed += o.elapsed;
  errors.insert(errors.end(), o.errors.begin(), o.errors.end());
  for (Landing l : o.landings) {
    l.request += landedNodes.size();
    landings.push_back(l);
  }
  landedNodes.insert(landedNodes.end(), o.landedNodes.begin(), o.landedNodes.end());
}

std::string errnoName(int err) {
  switch (err) {
    case EBUSY:
      return "EBUSY";
    case ENOMEM:
      return "ENOMEM";
    case EACCES:
      return "EACCES";
    case EFAULT:
      return "EFAULT";
    case ENOENT:
      return "ENOENT";
    case EPERM:
      return "EPERM";
    case ESRCH:
      return "ESRCH";
    case EINVAL:
      return "EINVAL";
    case ENODEV:
      return "ENODEV";
    case EAGAIN:
      return "EAGAIN";
    case EIO:
      return "EIO";
    default:
      return "errno " + std::to_string(err);
  }
}

}  // namespace mtm
