#pragma once
// The work of one interval, shared by mtmd and the manager embedded in `mtmctl run`: the
// profiler's snapshot of every managed process, the policy's plan over all tiers, the mover.
// Keeps the stats `mtmctl status` shows: per target and per tier, residency, migrations by
// reason and the profiler's cost.

#include <sys/types.h>

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "mtm/KernelFs.h"
#include "mtm/Result.h"
#include "mtm/Table.h"
#include "mtm/config/Config.h"
#include "mtm/daemon/ExitWatch.h"
#include "mtm/daemon/Machine.h"
#include "mtm/daemon/MoveWorker.h"
#include "mtm/migrate/LiveKernel.h"
#include "mtm/policy/Policy.h"
#include "mtm/profiler/Profiler.h"

namespace mtm::daemon {

struct TargetStats {
  int pid = 0;
  uid_t uid = 0;
  std::string comm;
  std::string origin;               // why it is managed: "config", "socket", "mtmctl run", ...
  std::string cgroup;               // cgroup v2 path at attach ("" without one)
  std::vector<uint64_t> tierBytes;  // profiled bytes per tier, by the node its pages were found on
  uint64_t hotBytes = 0;            // bytes at or above policy.hot_threshold
  uint64_t hotTopBytes = 0;         // of those, in the fastest tier
  uint64_t promotedPages = 0;       // 4 KiB pages, totals since attach
  uint64_t demotedPages = 0;
  uint64_t failedPages = 0;
  uint64_t pingPongPages = 0;             // planned moves back the way they came (policy.pingpong_window_s)
  std::map<int, uint64_t> failedByErrno;  // errno -> pages (EBUSY, ENOMEM, EACCES, ...)
};

// "ENOMEM 300, EBUSY 12" (most first); "" when nothing failed.
std::string describeFailures(const std::map<int, uint64_t>& failedByErrno);

// "3 group(s), 1 active, 3 transition(s); 6 prediction(s), 6 hit(s), 0 miss(es); predicted 384.0
// MiB, mispredicted 0.0 MiB": what prediction learned and did (policy.predict.mode on).
std::string describePrediction(const policy::PredictionReport& p);

struct TierStats {
  uint64_t promotedInPages = 0;  // pages moved into this tier, by reason
  uint64_t demotedInPages = 0;
};

// Since the manager started.
struct ManagerTotals {
  uint64_t intervals = 0;
  uint64_t profilerChecks = 0;
  uint64_t profilerCpuNs = 0;
};

// What one interval did.
struct IntervalReport {
  uint64_t interval = 0;
  double seconds = 0;
  size_t targets = 0;
  size_t regions = 0;
  uint64_t promotedPages = 0;
  uint64_t demotedPages = 0;
  uint64_t failedPages = 0;
  uint64_t plannedPages = 0;
  uint64_t pingPongPages = 0;
  uint64_t thpSplit = 0;      // THPs split to move only their hot part
  uint64_t thpCollapsed = 0;  // THPs formed again once their access evened out
  double profilerCpu = 0;     // fraction of one core
  std::vector<int> exited;
};

class Manager {
 public:
  // Builds the profiler, policy and mover the config names; fails when one cannot run.
  static Result<std::unique_ptr<Manager>> create(const config::Config& config, Machine machine);

  // Starts managing a process. Errors name the pid and why (gone, not readable, no source).
  Status attach(int pid, const std::string& origin);
  // Stops managing it; false when it was not managed. It is not re-attached from the config.
  bool detach(int pid);
  // Passes a managed process's hint to the policy (predictive placement); errors say why not.
  Status hint(const policy::Hint& hint);
  bool manages(int pid) const { return targets_.count(pid) > 0; }
  std::optional<uid_t> ownerOf(int pid) const;

  // Attaches what the config's targets section matches now (pids, cgroups, command names).
  void attachConfigTargets();

  // Exits as they happen, for the caller's poll(2): a managed process that exits is forgotten
  // by onExits at once, so `mtmctl status` never lists it, even in the middle of an interval.
  std::vector<pollfd> exitPollFds() const { return exits_.pollFds(); }
  void onExits(const std::vector<pollfd>& ready);

  // One interval: snapshot, fresh free memory, plan, and the plan's moves (demotions first, to
  // make room) handed to the move worker. While an earlier interval's moves still run, the
  // interval profiles and plans nothing. Inline (mtmctl run's embedded manager), it waits for
  // the moves and the report counts them.
  IntervalReport runInterval();
  void setMovesInline(bool movesInline) { movesInline_ = movesInline; }
  // The move worker, for the caller's poll(2): readable when an interval's moves have finished;
  // then onMovesDone() accounts for them.
  int movesDoneFd() const { return worker_.fd(); }
  void onMovesDone();
  bool movesInFlight() const { return worker_.busy(); }

  // A new config (SIGHUP): new profiler, policy and mover; the targets are kept, and so are the
  // profiler (its regions) when its section and the tiers are unchanged, and the policy (its
  // memory of moves) when what it reads is. On an error everything stays as it was.
  Status reconfigure(const config::Config& config, Machine machine);

  const config::Config& config() const { return config_; }
  const Machine& machine() const { return machine_; }
  const profiler::Profiler& profiler() const { return *profiler_; }
  // Profiler::prime and primeLead: call primeProfiler() primeLead() before runInterval().
  void primeProfiler() { profiler_->prime(); }
  std::chrono::milliseconds primeLead() const { return profiler_->primeLead(); }
  const profiler::Snapshot& lastSnapshot() const { return last_; }
  const std::map<int, TargetStats>& targets() const { return targets_; }
  const std::vector<TierStats>& tierStats() const { return tierStats_; }
  const ManagerTotals& totals() const { return totals_; }
  // The mover's measured rate: bytes over seconds of its recent runs, a large run counting for
  // its size (0 before anything moved).
  double moveBytesPerSecond() const { return movingSeconds_ > 0 ? movedBytes_ / movingSeconds_ : 0; }
  // What predictive placement knows and did (policy.predict; zeros when off).
  const policy::PredictionReport& prediction() const { return prediction_; }
  // 4 KiB pages handed to the move worker and not yet accounted for (0 when idle).
  uint64_t pagesInFlight() const;
  // Profiled bytes per tier of the targets `viewer` may see (root: all).
  std::vector<uint64_t> tierTotals(uid_t viewer) const;

  // `mtmctl status`: tiers, then targets; only those `viewer` owns unless it is root.
  std::string renderStatus(Format format, uid_t viewer) const;
  // One line of per-tier residency of the managed processes: "t=12s tier0 310M tier1 ...".
  std::string residencyLine() const;

 private:
  Manager(const config::Config& config, Machine machine);
  struct Built {
    bool profiler = false;  // the running one stays (its regions and their history)
    bool policy = false;    // the running one stays (its memory of moves)
  };
  // Builds the parts not kept; replaces nothing until every part is built.
  Status build(const Built* kept);
  IntervalReport runIntervalSteps();
  void account(const MoveStats& stats, const std::vector<MoveRequest>& requests, MoveKind kind);
  // Stops managing pid: the profiler drops it and the next snapshot lists it as exited, so the
  // policy forgets it too.
  void forget(int pid);

  config::Config config_;
  Machine machine_;
  KernelFs fs_{"/"};
  migrate::LiveKernel kernel_;

  // One interval's moves, run by worker_: the plan going in, what happened coming out. The
  // worker thread alone touches it between start() and collect().
  struct Moves {
    uint64_t interval = 0;
    std::vector<MoveRequest> demotions, promotions;
    std::vector<policy::CollapseRequest> collapses;
    MoveStats demoted, promoted;
    uint64_t thpCollapsed = 0;
    uint64_t pages = 0;                      // requested, 4 KiB pages (set before the worker starts; it only reads it)
    std::map<int, SharedPidfd> pidfds = {};  // of the collapses' processes, taken on the caller's thread
  };
  // On the worker thread: the moves, then the THPs to form again.
  void runMoves(migrate::Mover& mover, Moves& moves);
  // Back on the caller's thread: the moves' stats into the targets, tiers and `rep`.
  void finishMoves(IntervalReport& rep);
  std::unique_ptr<profiler::Profiler> profiler_;
  std::unique_ptr<policy::Policy> policy_;
  std::shared_ptr<migrate::Mover> mover_;  // shared with moves still running after a reload
  std::map<int, TargetStats> targets_;
  std::set<int> detached_;      // detached by request: the config does not bring them back
  std::set<int> unattachable_;  // config matches that could not be attached (warned once)
  ExitWatch exits_;
  std::vector<int> forgotten_;  // dropped since the last interval: for the next snapshot's exited
  std::vector<TierStats> tierStats_;
  profiler::Snapshot last_;
  IntervalReport lastReport_;
  policy::PredictionReport prediction_;
  ManagerTotals totals_;
  IntervalReport lastMoves_;                   // moved, failed, split and collapsed by the last moves to finish
  double movedBytes_ = 0, movingSeconds_ = 0;  // the mover's recent runs, each sum decayed per run
  bool movesInline_ = false;
  std::unique_ptr<Moves> moves_;  // in flight
  MoveWorker worker_;             // last: destroyed first, cancelling and ending its moves
};

}  // namespace mtm::daemon
