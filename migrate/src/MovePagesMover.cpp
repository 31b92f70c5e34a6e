#include "mtm/migrate/MovePagesMover.h"

#include <numaif.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstring>
#include <map>
#include <mutex>
#include <numeric>
#include <thread>

#include "mtm/Log.h"
#include "mtm/Registry.h"
#include "mtm/migrate/PageList.h"

namespace mtm::migrate {

MoverOptions MoverOptions::fromConfig(const config::MigrationConfig& c) {
  MoverOptions o;
  o.batchPages = c.batchPages;
  o.threads = c.threads;
  o.maxRateBytes = c.maxRateBytes;
  o.maxPages = c.maxPagesPerInterval;
  o.retries = c.retries;
  o.dryRun = c.dryRun;
  return o;
}

namespace {

// move_pages leaves status entries it did not reach untouched: this value marks them.
constexpr int kNotReached = INT_MIN;

std::string whatToDo(int err) {
  switch (err) {
    case EPERM:
    case EACCES:
      return ::geteuid() == 0 ? ": refused although running as root (moving another user's pages needs CAP_SYS_NICE)"
                              : ": run as root or as the process's owner (moving another user's pages needs CAP_SYS_NICE)";
    case ESRCH:
    case ENOENT:
      return ": the process has exited";
    case ENODEV:
    case EINVAL:
      return ": the destination node has no memory or does not exist";
    default:
      return "";
  }
}

// Where each page of one pass ended up.
struct PassOutcome {
  std::vector<PageEntry> retry;  // temporary failure: try again
  std::vector<int> retryErr;     // why, for when retries run out
  std::vector<PageEntry> full;   // the destination had no room
};

// One execute() call: shared by its worker threads.
class Execution {
 public:
  Execution(Mover::Context& ctx, Pacer& pacer, const Mover::ProgressFn& progress)
      : ctx_(ctx), progress_(progress), pacer_(pacer), budget_(ctx.options.maxPages == 0 ? UINT64_MAX : ctx.options.maxPages) {}
  ~Execution() {
    for (const auto& [pid, fd] : pidfds_)
      if (fd >= 0) ctx_.deps.sys.closeFd(fd);
  }
  Execution(const Execution&) = delete;
  Execution& operator=(const Execution&) = delete;

  MoveStats run(const std::vector<MoveRequest>& requests) {
    const auto start = ctx_.deps.clock.now();
    std::vector<size_t> order(requests.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return requests[a].kind == MoveKind::Promotion && requests[b].kind != MoveKind::Promotion;
    });
    stats_.landedNodes.assign(requests.size(), -1);
    for (size_t i : order) {
      placed_.clear();
      stats_.landedNodes[i] = runRequest(requests[i]);
      addLandings(i);
    }
    stats_.elapsed = ctx_.deps.clock.now() - start;
    return stats_;
  }

 private:
  // placed_ (one request's pages, each where it lies now) as stretches on one node each.
  void addLandings(size_t request) {
    if (ctx_.options.dryRun) return;
    std::sort(placed_.begin(), placed_.end(), [](const Placed& a, const Placed& b) { return a.addr < b.addr; });
    std::vector<Landing> runs;  // the longest stretches on one node
    for (const auto& p : placed_) {
      const uint64_t end = p.addr + p.pages * kPageSize;
      if (!runs.empty() && runs.back().node == p.node)
        runs.back().end = end;
      else
        runs.push_back({request, p.addr, end, p.node});
    }
    auto isShort = [](const Landing& l) { return l.end - l.start < MoveStats::kMinLanding; };
    std::vector<Landing> out;
    for (const auto& r : runs) {
      if (out.empty() || (out.back().node != r.node && !isShort(r) && !isShort(out.back()))) {
        out.push_back(r);
        continue;
      }
      // The same node, or one of the two is short: one stretch, on the longer one's node.
      Landing& last = out.back();
      if (r.end - r.start > last.end - last.start) last.node = r.node;
      last.end = r.end;
    }
    stats_.landings.insert(stats_.landings.end(), out.begin(), out.end());
  }

  void fail(const std::string& message) {
    MTM_DEBUG("migrate error=\"{}\"", message);
    stats_.errors.push_back(message);
  }

  Result<PageList> listPages(const MoveRequest& req, const std::vector<Vma>& vmas, int pidfd) {
    const auto ranges = req.ranges.empty() ? wholeAddressSpace(vmas) : req.ranges;
    uint64_t lo = UINT64_MAX, hi = 0;
    for (const auto& r : ranges) {
      lo = std::min(lo, r.start);
      hi = std::max(hi, r.end);
    }
    auto huge = ctx_.deps.huge.find(req.pid, vmas, lo, hi);
    if (!huge) return std::move(huge).takeError();
    PageList list = buildPageList(ranges, vmas, *huge, req.splitPartialThps);
    if (list.toSplit.empty() || ctx_.options.dryRun) return list;

    // A THP covered partly: split it (process_madvise MADV_COLD on one 4 KiB page of a
    // PMD-mapped THP splits it, Linux 5.10+; the page also moves to the inactive LRU), then
    // list again. A THP that did not split (shared, pinned) moves whole.
    for (const auto& thp : list.toSplit) {
      long r = ctx_.deps.sys.processMadvise(pidfd, {iovec{reinterpret_cast<void*>(thp.start), kPageSize}}, MADV_COLD);
      if (r < 0) MTM_WARN("thp split pid={} addr={:#x} error=\"{}\"", req.pid, thp.start, std::strerror(static_cast<int>(-r)));
    }
    auto after = ctx_.deps.huge.find(req.pid, vmas, lo, hi);
    if (!after) return std::move(after).takeError();
    for (const auto& thp : list.toSplit) {
      if (std::find(after->begin(), after->end(), thp) == after->end())
        ++stats_.thpSplit;
      else
        MTM_WARN("thp split pid={} addr={:#x} result=kept_whole (shared or pinned)", req.pid, thp.start);
    }
    return buildPageList(ranges, vmas, *after, false);
  }

  // A process's VMAs and pidfd, once per execute() however many requests name it (moving
  // pages, splitting THPs, changes no VMA).
  const Result<std::vector<Vma>>& vmasOf(int pid) {
    auto it = vmas_.find(pid);
    if (it == vmas_.end()) it = vmas_.emplace(pid, readProcessVmas(ctx_.deps.fs, pid)).first;
    return it->second;
  }
  int pidfdOf(const MoveRequest& req) {
    if (req.pidfd) return req.pidfd->get();
    auto it = pidfds_.find(req.pid);
    if (it == pidfds_.end()) it = pidfds_.emplace(req.pid, ctx_.deps.sys.pidfdOpen(req.pid)).first;
    return it->second;
  }

  // Returns the node that now holds half or more of the request's pages, or -1.
  int runRequest(const MoveRequest& req) {
    if (ctx_.cancelled && ctx_.cancelled(req.pid)) return -1;  // detached or exited before its turn
    const std::string who = "pid " + std::to_string(req.pid);
    const auto& vmas = vmasOf(req.pid);
    if (!vmas) {
      fail(vmas.error().message());
      return -1;
    }
    const int pidfd = pidfdOf(req);
    if (pidfd < 0) {
      fail(who + ": pidfd_open: " + std::strerror(-pidfd) + whatToDo(-pidfd));
      return -1;
    }
    auto list = listPages(req, *vmas, pidfd);
    if (!list) {
      fail(who + ": " + list.error().message());
      return -1;
    }
    if (list->entries.empty() && list->unmappedPages > 0) {
      fail(who + ": no page of the requested ranges is mapped");
    }
    if (list->unmappedPages > 0) stats_.failed[EFAULT] += list->unmappedPages;
    uint64_t requested = list->unmappedPages;
    for (const auto& e : list->entries) requested += e.pages;
    stats_.pagesRequested += requested;
    totalPages_ = stats_.pagesRequested;
    done_ += list->unmappedPages;

    std::vector<int> nodes{req.toNode};
    nodes.insert(nodes.end(), req.fallbackNodes.begin(), req.fallbackNodes.end());
    std::vector<PageEntry> pending = std::move(list->entries);
    if (!req.stayNodes.empty()) pending = withoutStaying(req.pid, std::move(pending), req.stayNodes);
    int landed = -1;
    for (size_t n = 0; n < nodes.size() && !pending.empty() && !stopped(); ++n) {
      if (n > 0)
        MTM_INFO("migrate pid={} fallback to=node{} pages={} reason=\"node{} full\"", req.pid, nodes[n], pagesOf(pending), nodes[n - 1]);
      const uint64_t movedBefore = stats_.pagesMoved;
      pending = moveWithRetries(req.pid, pidfd, std::move(pending), nodes[n], n > 0);
      if (!ctx_.options.dryRun && 2 * (stats_.pagesMoved - movedBefore) >= requested && requested > 0) landed = nodes[n];
    }
    settle(pending, stopped() ? stopErr_ : ENOMEM);
    if (stopErr_ == ECANCELED)
      MTM_DEBUG("migrate pid={} cancelled pages_not_attempted={}", req.pid, stats_.pagesCancelled);
    else if (stopErr_ != 0 && stopErr_ != ESRCH)
      fail(who + ": move_pages: " + std::strerror(stopErr_) + whatToDo(stopErr_));
    else if (stopErr_ == ESRCH)
      fail(who + ": the process exited during migration; " + std::to_string(stats_.pagesCancelled) + " pages not attempted");
    stopErr_ = 0;
    return landed;
  }

  // `entries` less those that lie on one of `stay` now (counted as stayed), asked of the kernel a
  // batch at a time. A batch the kernel cannot answer for is kept: its move says why.
  std::vector<PageEntry> withoutStaying(int pid, std::vector<PageEntry> entries, const std::vector<int>& stay) {
    std::vector<PageEntry> kept;
    std::vector<void*> addrs;
    std::vector<int> status;
    for (size_t first = 0; first < entries.size(); first += ctx_.options.batchPages) {
      const size_t count = std::min<size_t>(ctx_.options.batchPages, entries.size() - first);
      const long r = queryNodes(ctx_.deps.sys, pid, &entries[first], count, addrs, status);
      std::lock_guard lock(mu_);
      ++stats_.calls;
      for (size_t i = 0; i < count; ++i) {
        const PageEntry& e = entries[first + i];
        if (r < 0 || std::find(stay.begin(), stay.end(), status[i]) == stay.end()) {
          kept.push_back(e);
          continue;
        }
        stats_.pagesStayed += e.pages;
        done_ += e.pages;
        placed_.push_back({e.addr, e.pages, status[i]});
      }
    }
    return kept;
  }

  // Moves `entries` to `node`, retrying temporary failures; returns what found the node full.
  std::vector<PageEntry> moveWithRetries(int pid, int pidfd, std::vector<PageEntry> entries, int node, bool fallback) {
    std::vector<PageEntry> full;
    const uint32_t passes = ctx_.options.dryRun ? 1 : ctx_.options.retries + 1;
    for (uint32_t attempt = 0; attempt < passes && !entries.empty(); ++attempt) {
      if (attempt > 0) stats_.retries += pagesOf(entries);
      PassOutcome out = pass(pid, pidfd, entries, node, fallback);
      full.insert(full.end(), out.full.begin(), out.full.end());
      entries = std::move(out.retry);
      if (attempt + 1 == passes || stopped()) {
        for (size_t i = 0; i < entries.size(); ++i) settle({entries[i]}, stopped() ? stopErr_ : out.retryErr[i]);
        entries.clear();
      }
    }
    return full;
  }

  PassOutcome pass(int pid, int pidfd, const std::vector<PageEntry>& entries, int node, bool fallback) {
    PassOutcome out;
    const size_t batch = ctx_.options.batchPages;
    const size_t batches = (entries.size() + batch - 1) / batch;
    std::atomic<size_t> next{0};
    auto worker = [&] {
      std::vector<void*> addrs;
      std::vector<int> dest, status;
      for (size_t b; (b = next.fetch_add(1)) < batches;) {
        const size_t first = b * batch, last = std::min(entries.size(), first + batch);
        size_t count = last - first;
        Clock::Duration wait{0};
        {
          std::lock_guard lock(mu_);
          if (stopped()) {
            settleLocked(entries, first, last, stopErr_);
            continue;
          }
          // The page budget admits whole entries; the rest of the batch is deferred.
          uint64_t pages = 0;
          size_t fit = 0;
          while (fit < count && pages + entries[first + fit].pages <= budget_) pages += entries[first + fit++].pages;
          for (size_t i = first + fit; i < last; ++i) stats_.pagesDeferred += entries[i].pages, done_ += entries[i].pages;
          count = fit;
          budget_ -= pages;
          if (count == 0) continue;
          wait = pacer_.reserve(pages * kPageSize, ctx_.deps.clock.now());
        }
        ctx_.deps.clock.sleepFor(wait);
        if (ctx_.cancelled && ctx_.cancelled(pid)) {
          std::lock_guard lock(mu_);
          stopErr_ = ECANCELED;
          settleLocked(entries, first, first + count, ECANCELED);
          continue;
        }
        if (ctx_.deps.sys.exited(pidfd)) {
          std::lock_guard lock(mu_);
          stopErr_ = ESRCH;
          settleLocked(entries, first, first + count, ESRCH);
          continue;
        }
        addrs.resize(count);
        dest.assign(count, node);
        status.assign(count, kNotReached);
        for (size_t i = 0; i < count; ++i) addrs[i] = reinterpret_cast<void*>(entries[first + i].addr);
        long r =
            ctx_.deps.sys.movePages(pid, count, addrs.data(), ctx_.options.dryRun ? nullptr : dest.data(), status.data(), MPOL_MF_MOVE);
        // A process that exited between the check above and the call reads as EINVAL (no mm).
        if (r < 0 && r != -ENOMEM && ctx_.deps.sys.exited(pidfd)) r = -ESRCH;
        std::lock_guard lock(mu_);
        ++stats_.calls;
        classify(entries, first, count, status, r, node, fallback, out);
        report();
      }
    };
    const uint32_t threads = std::max<uint32_t>(1, std::min<uint32_t>(ctx_.options.threads, static_cast<uint32_t>(batches)));
    std::vector<std::thread> pool;
    for (uint32_t t = 1; t < threads; ++t) pool.emplace_back(worker);
    worker();
    for (auto& t : pool) t.join();
    return out;
  }

  // Sorts one call's entries into moved, failed, retry and full. Called with mu_ held.
  void classify(const std::vector<PageEntry>& entries, size_t first, size_t count, const std::vector<int>& status, long ret, int node,
                bool fallback, PassOutcome& out) {
    for (size_t i = 0; i < count; ++i) {
      const PageEntry& e = entries[first + i];
      int s = status[i];
      if (s == kNotReached) s = ret < 0 ? static_cast<int>(ret) : -EAGAIN;
      if (ctx_.options.dryRun) {
        if (s == node)
          stats_.pagesAlreadyThere += e.pages;
        else if (s >= 0)
          stats_.pagesWouldMove += e.pages;
        else
          stats_.failed[-s] += e.pages;
        done_ += e.pages;
        continue;
      }
      if (s == node) {
        placed_.push_back({e.addr, e.pages, node});
        stats_.pagesMoved += e.pages;
        if (fallback) stats_.pagesToFallback += e.pages;
        if (e.kind == PageKind::Thp) ++stats_.thpMovedWhole;
        if (e.kind == PageKind::Hugetlb) ++stats_.hugetlbMoved;
        done_ += e.pages;
        continue;
      }
      const int err = s >= 0 ? EAGAIN : -s;  // s >= 0: still on another node, not migrated this time
      switch (err) {
        case EBUSY:
        case EAGAIN:
        case EINTR:
          out.retry.push_back(e);
          out.retryErr.push_back(err);
          break;
        case ENOMEM:
          out.full.push_back(e);
          break;
        case ESRCH:
        case EPERM:
        case EINVAL:
        case ENODEV:
          if (ret < 0) stopErr_ = err;  // the whole call failed: stop this request
          settleLocked(entries, first + i, first + i + 1, err);
          break;
        default:  // EACCES (shared page), EFAULT (zero page, not mapped), ENOENT (not present), ...
          stats_.failed[err] += e.pages;
          done_ += e.pages;
          // No page there: a stretch on no node, so that the regions stop planning it until a
          // check finds a page there again (a stack's untouched end failed every cooldown).
          if (err == ENOENT) placed_.push_back({e.addr, e.pages, -1});
      }
    }
  }

  // Final accounting for pages that will not be attempted again.
  void settleLocked(const std::vector<PageEntry>& entries, size_t first, size_t last, int err) {
    for (size_t i = first; i < last; ++i) {
      if (err == ESRCH || err == ECANCELED)
        stats_.pagesCancelled += entries[i].pages;
      else
        stats_.failed[err] += entries[i].pages;
      done_ += entries[i].pages;
    }
  }
  void settle(const std::vector<PageEntry>& entries, int err) {
    std::lock_guard lock(mu_);
    settleLocked(entries, 0, entries.size(), err);
  }

  bool stopped() const { return stopErr_ != 0; }

  void report() {
    if (!progress_) return;
    progress_(Progress{done_, totalPages_, stats_.pagesMoved, ctx_.deps.clock.now() - startTime_});
  }

  static uint64_t pagesOf(const std::vector<PageEntry>& entries) {
    uint64_t n = 0;
    for (const auto& e : entries) n += e.pages;
    return n;
  }

  Mover::Context& ctx_;
  const Mover::ProgressFn& progress_;
  std::mutex mu_;
  Pacer& pacer_;  // the mover's: the rate holds across calls
  uint64_t budget_;
  MoveStats stats_;
  uint64_t done_ = 0, totalPages_ = 0;
  int stopErr_ = 0;
  Clock::TimePoint startTime_ = ctx_.deps.clock.now();
  std::map<int, Result<std::vector<Vma>>> vmas_;
  std::map<int, int> pidfds_;  // opened for requests without one; negative: pidfd_open's error
  struct Placed {
    uint64_t addr, pages;
    int node;
  };
  std::vector<Placed> placed_;  // the current request's pages that moved, stayed, or were not present (node -1)
};

}  // namespace

MoveStats MovePagesMover::execute(const std::vector<MoveRequest>& requests, const ProgressFn& progress) {
  Execution run(ctx_, pacer_, progress);
  return run.run(requests);
}

namespace {
const bool kRegistered = Registry<Mover>::add("move_pages", "move_pages(2): batched, paced, THP-aware, with retries and fallback nodes",
                                              [](const Mover::Context& ctx) { return std::make_unique<MovePagesMover>(ctx); });
}  // namespace

}  // namespace mtm::migrate
