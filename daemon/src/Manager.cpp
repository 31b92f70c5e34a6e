#include "mtm/daemon/Manager.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "mtm/Log.h"
#include "mtm/Parse.h"
#include "mtm/Registry.h"
#include "mtm/daemon/MoveTurns.h"
#include "mtm/daemon/Process.h"
#include "mtm/migrate/Mover.h"
#include "mtm/migrate/Placement.h"

namespace mtm::daemon {
namespace {

uint64_t pagesOf(const std::vector<MoveRequest>& requests) {
  uint64_t n = 0;
  for (const auto& r : requests) n += bytesOf(r.ranges) / kPageSize;
  return n;
}

const char* kindName(MoveKind kind) { return kind == MoveKind::Promotion ? "promote" : kind == MoveKind::Demotion ? "demote" : "move"; }

// Whether two tier maps group the same nodes the same way (free memory may differ).
bool sameTiers(const config::TierMap& a, const config::TierMap& b) {
  if (a.tiers.size() != b.tiers.size()) return false;
  for (size_t i = 0; i < a.tiers.size(); ++i)
    if (a.tiers[i].nodes != b.tiers[i].nodes) return false;
  return true;
}

// What the policy reads of the config besides its own section.
bool samePolicyInputs(const config::Config& a, const config::Config& b) {
  return a.policy == b.policy && a.profiler.intervalMs == b.profiler.intervalMs && a.migration == b.migration;
}

}  // namespace

Manager::Manager(const config::Config& config, Machine machine) : config_(config), machine_(std::move(machine)) {}

Result<std::unique_ptr<Manager>> Manager::create(const config::Config& config, Machine machine) {
  std::unique_ptr<Manager> m(new Manager(config, std::move(machine)));
  if (auto st = m->build(nullptr); !st.ok()) return std::move(st).takeError();
  return m;
}

Status Manager::build(const Built* kept) {
  if (auto st = config::refreshFreeMemory(machine_.tiers, fs_); !st.ok()) return st;
  std::unique_ptr<profiler::Profiler> prof;
  std::unique_ptr<policy::Policy> pol;
  if (!kept || !kept->profiler) {
    auto made = profiler::Profiler::create(config_, &machine_.tiers);
    if (!made) return std::move(made).takeError().context("starting the profiler");
    prof = std::move(*made);
  }
  if (!kept || !kept->policy) {
    auto made = Registry<policy::Policy>::create(config_.policy.name, {config_});
    if (!made) return std::move(made).takeError().context("policy.name");
    pol = std::move(*made);
  }
  // The policy fits each plan to the page budget; the mover keeps the byte rate.
  auto options = migrate::MoverOptions::fromConfig(config_.migration);
  options.maxPages = 0;
  auto mov = Registry<migrate::Mover>::create(config_.migration.mover,
                                              {kernel_.deps(), options, [this](int pid) { return worker_.cancelled(pid); }});
  if (!mov) return std::move(mov).takeError().context("migration.mover");
  if (prof) profiler_ = std::move(prof);
  if (pol) policy_ = std::move(pol);
  mover_ = std::move(*mov);
  tierStats_.assign(machine_.tiers.tiers.size(), {});
  std::string sources;
  for (const auto& s : profiler_->activeSources()) sources += (sources.empty() ? "" : ",") + s;
  MTM_INFO("manager policy={} mover={} sources={} interval_ms={} budget={:.2f}%{}{}", config_.policy.name, config_.migration.mover, sources,
           config_.profiler.intervalMs, config_.profiler.budget * 100,
           kept && kept->profiler ? " (profiler kept: regions and their history)" : "",
           kept && kept->policy ? " (policy kept: its memory of moves)" : "");
  return {};
}

Status Manager::reconfigure(const config::Config& config, Machine machine) {
  // Unchanged sections keep what they learnt: the profiler its regions, the policy its memory.
  const bool tiersSame = sameTiers(machine_.tiers, machine.tiers);
  const Built kept{tiersSame && config.profiler == config_.profiler, tiersSame && samePolicyInputs(config, config_)};
  config::Config oldConfig = std::exchange(config_, config);
  Machine oldMachine = std::exchange(machine_, std::move(machine));
  if (auto st = build(&kept); !st.ok()) {
    // build() replaces nothing until every part is built: the old profiler, policy and mover
    // still run, with the config and machine they were built for.
    config_ = std::move(oldConfig);
    machine_ = std::move(oldMachine);
    return st;
  }
  if (kept.profiler) return {};
  std::vector<int> dropped;
  for (const auto& [pid, t] : targets_) {
    if (auto st = profiler_->addTarget(pid, exits_.pidfdOf(pid)); !st.ok()) {
      MTM_WARN("target pid={} dropped after reload: {}", pid, st.error().message());
      dropped.push_back(pid);
    }
  }
  for (int pid : dropped) forget(pid);
  return {};
}

Status Manager::attach(int pid, const std::string& origin) {
  if (targets_.count(pid)) return {};
  auto id = readProcessIdentity(fs_, pid);
  if (!id) return std::move(id).takeError();
  if (auto st = checkManageable(*id); !st.ok()) return st;
  // The process's one pidfd: its exit watch, its profiler sources and its moves share it.
  auto pidfd = openPidfd(pid);
  if (!pidfd) MTM_DEBUG("{}: its exit is noticed at the next interval", pidfd.error().message());
  if (auto st = profiler_->addTarget(pid, pidfd ? *pidfd : nullptr); !st.ok()) return st;
  TargetStats t;
  t.pid = pid;
  t.uid = id->realUid;
  t.comm = id->comm;
  t.origin = origin;
  t.cgroup = readCgroup(fs_, pid);
  t.tierBytes.assign(machine_.tiers.tiers.size(), 0);
  targets_.emplace(pid, std::move(t));
  detached_.erase(pid);
  exits_.watch(pid, pidfd ? *pidfd : nullptr);
  MTM_INFO("attach pid={} comm={} uid={} origin=\"{}\"", pid, id->comm, id->realUid, origin);
  return {};
}

bool Manager::detach(int pid) {
  if (!targets_.count(pid)) return false;
  forget(pid);
  detached_.insert(pid);
  MTM_INFO("detach pid={}", pid);
  return true;
}

Status Manager::hint(const policy::Hint& hint) {
  if (!targets_.count(hint.pid))
    return Error("pid " + std::to_string(hint.pid) + " is not managed (mtmctl attach it, or start it with mtmctl run)");
  auto st = policy_->hint(hint);
  if (st.ok())
    MTM_INFO("hint pid={} {}={}", hint.pid, hint.phase ? "phase" : "group_ranges", hint.phase ? hint.number : hint.ranges.size());
  return st;
}

void Manager::forget(int pid) {
  worker_.cancel(pid);
  profiler_->removeTarget(pid);
  exits_.forget(pid);
  if (targets_.erase(pid)) forgotten_.push_back(pid);
}

void Manager::onExits(const std::vector<pollfd>& ready) {
  for (int pid : exits_.exited(ready)) {
    if (targets_.count(pid)) MTM_INFO("target pid={} exited", pid);
    forget(pid);
  }
}

std::optional<uid_t> Manager::ownerOf(int pid) const {
  auto it = targets_.find(pid);
  if (it == targets_.end()) return std::nullopt;
  return it->second.uid;
}

void Manager::attachConfigTargets() {
  std::set<int> failed;
  for (const auto& [pid, why] : matchConfigTargets(config_.targets, fs_)) {
    if (targets_.count(pid) || detached_.count(pid)) continue;
    if (unattachable_.count(pid)) {  // said once; tried again only after it stops matching
      failed.insert(pid);
      continue;
    }
    if (auto st = attach(pid, why); !st.ok()) {
      MTM_WARN("target pid={} ({}) not managed: {}", pid, why, st.error().message());
      failed.insert(pid);
    }
  }
  unattachable_ = std::move(failed);
}

void Manager::account(const MoveStats& stats, const std::vector<MoveRequest>& requests, MoveKind kind) {
  // Requests of one call may span targets; pages are credited to each request's target in
  // proportion to its share of the call (the mover reports per call).
  const uint64_t requested = std::max<uint64_t>(1, stats.pagesRequested);
  for (const auto& r : requests) {
    auto it = targets_.find(r.pid);
    if (it == targets_.end()) continue;
    const double share = double(pagesOf({r})) / double(requested);
    const auto moved = static_cast<uint64_t>(std::llround(share * double(stats.pagesMoved)));
    (kind == MoveKind::Promotion ? it->second.promotedPages : it->second.demotedPages) += moved;
    it->second.failedPages += static_cast<uint64_t>(std::llround(share * double(stats.pagesFailed())));
    for (const auto& [err, pages] : stats.failed)
      if (auto n = static_cast<uint64_t>(std::llround(share * double(pages)))) it->second.failedByErrno[err] += n;
    const int tier = machine_.tiers.tierOfNode(r.toNode);
    if (tier >= 0) (kind == MoveKind::Promotion ? tierStats_[tier].promotedInPages : tierStats_[tier].demotedInPages) += moved;
  }
  for (const auto& e : stats.errors) MTM_WARN("{}: {}", kindName(kind), e);
}

IntervalReport Manager::runInterval() {
  lastReport_ = runIntervalSteps();
  return lastReport_;
}

IntervalReport Manager::runIntervalSteps() {
  last_ = profiler_->runInterval();
  IntervalReport rep;
  rep.interval = last_.interval;
  rep.seconds = last_.seconds;
  rep.regions = last_.regions.size();
  rep.profilerCpu = double(last_.cpuNs) / (double(config_.profiler.intervalMs) * 1e6);
  ++totals_.intervals;
  totals_.profilerChecks += last_.checks;
  totals_.profilerCpuNs += last_.cpuNs;
  for (int pid : last_.exited) {
    if (targets_.count(pid)) {
      MTM_INFO("target pid={} exited", pid);
      exits_.forget(pid);
      targets_.erase(pid);
    }
    rep.exited.push_back(pid);
  }
  // What was dropped between intervals (exits seen by pidfd, detaches) is news to the policy.
  last_.exited.insert(last_.exited.end(), forgotten_.begin(), forgotten_.end());
  forgotten_.clear();
  for (auto& [pid, t] : targets_) {
    std::fill(t.tierBytes.begin(), t.tierBytes.end(), 0);
    t.hotBytes = 0;
    t.hotTopBytes = 0;
  }
  for (const auto& r : last_.regions) {
    auto it = targets_.find(r.pid);
    if (it == targets_.end()) continue;
    if (r.tier >= 0 && static_cast<size_t>(r.tier) < it->second.tierBytes.size()) it->second.tierBytes[r.tier] += r.end - r.start;
    if (r.hotness >= config_.policy.hotThreshold) {
      it->second.hotBytes += r.end - r.start;
      if (r.tier == 0) it->second.hotTopBytes += r.end - r.start;
    }
  }
  rep.targets = targets_.size();

  if (worker_.busy()) {
    MTM_DEBUG("interval={}: the moves of interval {} still run: no plan this interval", rep.interval, moves_->interval);
    policy_->observe(last_, machine_.tiers);
    return rep;
  }
  if (auto st = config::refreshFreeMemory(machine_.tiers, fs_); !st.ok()) {
    MTM_WARN("no placement this interval: {}", st.error().message());
    policy_->observe(last_, machine_.tiers);
    return rep;
  }
  auto plan = policy_->plan(last_, machine_.tiers);
  prediction_ = plan.prediction;
  std::vector<MoveRequest> promotions, demotions;
  for (auto& m : plan.moves) {
    if (!targets_.count(m.pid)) continue;
    (m.kind == MoveKind::Promotion ? promotions : demotions).push_back(std::move(m));
  }
  rep.plannedPages = pagesOf(promotions) + pagesOf(demotions);
  if (rep.plannedPages == 0 && plan.collapses.empty()) return rep;
  // Each move: at info in a dry run (it is what the run shows), else at debug.
  const auto level = config_.migration.dryRun ? spdlog::level::info : spdlog::level::debug;
  if (log::get().should_log(level))
    for (const auto* list : {&demotions, &promotions})
      for (const auto& m : *list)
        log::get().log(level, "{} {} pid={} range={:#x}-{:#x} pages={} to_node={}{}", config_.migration.dryRun ? "dry-run" : "plan",
                       kindName(m.kind), m.pid, m.ranges[0].start, m.ranges.back().end, pagesOf({m}), m.toNode,
                       m.splitPartialThps ? " split_thp=yes" : "");
  if (config_.migration.dryRun) {
    for (const auto& c : plan.collapses)
      for (const auto& r : c.ranges) MTM_INFO("dry-run collapse pid={} range={:#x}-{:#x}", c.pid, r.start, r.end);
    return rep;
  }
  for (const auto& pp : plan.pingPongs) {
    rep.pingPongPages += pp.pages;
    if (auto it = targets_.find(pp.pid); it != targets_.end()) it->second.pingPongPages += pp.pages;
  }
  // A region the plan moves in part is cut where the part ends, so that each part is ranked on its
  // own from now on (a dry run leaves the profiler's regions as they were).
  for (const auto& c : plan.cuts) profiler_->cutRegion(c.pid, c.addr);
  std::erase_if(plan.collapses, [&](const policy::CollapseRequest& c) { return !targets_.count(c.pid); });
  MTM_DEBUG("interval={} regions={} planned={} pingpong={} collapses={}", rep.interval, rep.regions, rep.plannedPages, rep.pingPongPages,
            plan.collapses.size());
  moves_ =
      std::make_unique<Moves>(Moves{rep.interval, cutIntoTurns(demotions), cutIntoTurns(promotions), std::move(plan.collapses), {}, {}, 0});
  for (auto* requests : {&moves_->demotions, &moves_->promotions})
    for (auto& r : *requests) {
      r.pidfd = exits_.pidfdOf(r.pid);
      moves_->pages += bytesOf(r.ranges) / kPageSize;
    }
  for (const auto& c : moves_->collapses) moves_->pidfds.emplace(c.pid, exits_.pidfdOf(c.pid));
  worker_.start([this, mover = mover_, moves = moves_.get()] { runMoves(*mover, *moves); });
  if (movesInline_ && worker_.wait()) finishMoves(rep);
  return rep;
}

void Manager::runMoves(migrate::Mover& mover, Moves& moves) {
  // Each promotion after the demotions that made its room (MoveTurns.h).
  runInTurns(mover, moves.demotions, moves.promotions, moves.demoted, moves.promoted);
  // THPs the policy split, whose access has evened out: formed again with MADV_COLLAPSE.
  for (const auto& c : moves.collapses) {
    if (worker_.cancelled(c.pid)) continue;
    auto formed = migrate::collapseThps(kernel_.deps(), c.pid, c.ranges, moves.pidfds[c.pid]);
    if (!formed) {
      MTM_WARN("thp collapse pid={}: {}", c.pid, formed.error().message());
      continue;
    }
    moves.thpCollapsed += *formed;
    MTM_INFO("thp collapse pid={} ranges={} formed={}", c.pid, c.ranges.size(), *formed);
  }
}

void Manager::onMovesDone() {
  if (!worker_.collect()) return;
  IntervalReport done;
  finishMoves(done);
}

uint64_t Manager::pagesInFlight() const { return worker_.busy() && moves_ ? moves_->pages : 0; }

void Manager::finishMoves(IntervalReport& rep) {
  Moves& m = *moves_;
  for (auto kind : {MoveKind::Demotion, MoveKind::Promotion}) {
    const bool up = kind == MoveKind::Promotion;
    const auto& list = up ? m.promotions : m.demotions;
    if (list.empty()) continue;
    const auto& stats = up ? m.promoted : m.demoted;
    account(stats, list, kind);
    // Where the pages went, stretch by stretch, for the regions: their checks would tell only
    // when one lands there (the profiler skips a process it no longer profiles).
    for (const auto& l : stats.landings)
      if (l.request < list.size()) profiler_->noteMoved(list[l.request].pid, l.start, l.end, l.node);
    // The rate pages really move (a run of at least 1 MiB), for the debug log and for the
    // policy's timing of moves ahead of need; it prices moves at migration.max_rate (MoveValue.h).
    // Bytes over seconds, each sum decayed per run: a large run counts for its size. (A mean of
    // the runs' rates read 63-72 MiB/s in the VM lab, from the many runs of a few MiB, where
    // the 128 MiB swaps that prediction times ran at 85-93: they began a second early.)
    if (const double seconds = std::chrono::duration<double>(stats.elapsed).count(); stats.pagesMoved >= 256 && seconds > 0) {
      movedBytes_ = 0.7 * movedBytes_ + double(stats.pagesMoved * kPageSize);
      movingSeconds_ = 0.7 * movingSeconds_ + seconds;
      policy_->moveRate(moveBytesPerSecond());
    }
    (up ? rep.promotedPages : rep.demotedPages) += stats.pagesMoved;
    rep.failedPages += stats.pagesFailed();
    rep.thpSplit += stats.thpSplit;
  }
  rep.thpCollapsed += m.thpCollapsed;
  lastMoves_ = rep;
  MTM_DEBUG(
      "moves of interval={} done: promoted={} demoted={} stayed={} failed={} cancelled={} thp_split={} thp_collapsed={} "
      "move_rate_mib_s={:.0f}",
      m.interval, m.promoted.pagesMoved, m.demoted.pagesMoved, m.promoted.pagesStayed + m.demoted.pagesStayed,
      m.promoted.pagesFailed() + m.demoted.pagesFailed(), m.promoted.pagesCancelled + m.demoted.pagesCancelled,
      m.promoted.thpSplit + m.demoted.thpSplit, m.thpCollapsed, moveBytesPerSecond() / double(1 << 20));
  moves_.reset();
}

}  // namespace mtm::daemon
