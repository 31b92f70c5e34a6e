#include "mtm/profiler/Profiler.h"

#include <algorithm>
#include <cerrno>
#include <thread>
#include <utility>

#include "mtm/Log.h"
#include "mtm/ProcMaps.h"
#include "mtm/Registry.h"
#include "mtm/profiler/Clock.h"

namespace mtm::profiler {

Profiler::Profiler(const config::Config& config, const config::TierMap* tiers)
    : config_(config), tiers_(tiers), controller_(config.profiler.budget, config.profiler.intervalMs), startNs_(clockNs(CLOCK_MONOTONIC)) {}

Result<std::unique_ptr<Profiler>> Profiler::create(const config::Config& config, const config::TierMap* tiers) {
  std::unique_ptr<Profiler> p(new Profiler(config, tiers));
  std::string why;
  auto probeAll = [&](const std::vector<std::string>& names, std::string_view role) -> Status {
    for (const auto& name : names) {
      auto source = Registry<Source>::create(name, {p->config_});
      if (!source) return std::move(source).takeError();
      if (auto st = (*source)->probe(); !st.ok()) {
        MTM_WARN("profiler source={} available=no reason=\"{}\"", name, st.error().message());
        why += (why.empty() ? "" : "; ") + name + ": " + st.error().message();
        continue;
      }
      MTM_INFO("profiler source={} available=yes{}", name, role);
      p->sources_.push_back(std::move(*source));
      p->names_.push_back(name);
    }
    return {};
  };
  if (auto st = probeAll(config.profiler.sources, ""); !st.ok()) return std::move(st).takeError();
  if (p->sources_.empty() && !config.profiler.fallbackSources.empty()) {
    MTM_WARN("profiler: none of profiler.sources can run here; trying profiler.fallback_sources");
    if (auto st = probeAll(config.profiler.fallbackSources, " (a fallback)"); !st.ok()) return std::move(st).takeError();
  }
  if (p->sources_.empty()) return Error("no profiler source can run here (" + why + ")");
  return p;
}

Status Profiler::refreshLayout(int pid, Target& t) {
  // A source that follows the address space says whether it changed; no read when it did not.
  std::optional<uint64_t> gen;
  for (auto* s : t.sources)
    if (!gen) gen = s->layoutGeneration(pid);
  if (gen && t.layoutGen == gen && !t.maps.empty()) {
    if (!proc_.exists("/proc/" + std::to_string(pid))) return Error("pid " + std::to_string(pid) + " exited", ESRCH);
    return {};
  }
  t.layoutGen = gen;
  ++t.mapsReads;
  auto text = proc_.read("/proc/" + std::to_string(pid) + "/maps");
  if (!text) return std::move(text).takeError();
  if (*text == t.maps) return {};  // the address space is as it was
  t.maps = std::move(*text);
  auto vmas = parseMaps(t.maps);
  if (!vmas) return std::move(vmas).takeError().context("reading /proc/" + std::to_string(pid) + "/maps");
  t.regions->rebuild(*vmas);
  return {};
}

Status Profiler::addTarget(int pid, SharedPidfd pidfd) {
  if (targets_.count(pid)) return {};
  if (!pidfd) {
    auto opened = openPidfd(pid);
    if (opened)
      pidfd = std::move(*opened);
    else
      MTM_DEBUG("profiler {}", opened.error().message());
  }
  Target t;
  t.regions = std::make_unique<RegionSet>(config_.profiler);
  if (auto st = refreshLayout(pid, t); !st.ok()) return processFileError(pid, st.error());
  std::string why;
  for (size_t i = 0; i < sources_.size(); ++i) {
    if (auto st = sources_[i]->attach(pid, pidfd); !st.ok()) {
      MTM_WARN("profiler pid={} source={} attached=no reason=\"{}\"", pid, names_[i], st.error().message());
      why += (why.empty() ? "" : "; ") + names_[i] + ": " + st.error().message();
      continue;
    }
    t.sources.push_back(sources_[i].get());
  }
  if (t.sources.empty()) return Error("pid " + std::to_string(pid) + ": no profiler source could attach (" + why + ")");
  targets_.emplace(pid, std::move(t));
  attachedSinceInterval_ = true;
  return {};
}

void Profiler::removeTarget(int pid) {
  auto it = targets_.find(pid);
  if (it == targets_.end()) return;
  for (auto* s : it->second.sources) s->detach(pid);
  targets_.erase(it);
}

bool Profiler::cutRegion(int pid, uint64_t addr) {
  auto it = targets_.find(pid);
  return it != targets_.end() && it->second.regions && it->second.regions->cutAt(addr);
}

void Profiler::noteMoved(int pid, uint64_t start, uint64_t end, int node) {
  auto it = targets_.find(pid);
  if (it != targets_.end() && it->second.regions) it->second.regions->noteNode(start, end, node);
}

uint64_t Profiler::mapsReads(int pid) const {
  auto it = targets_.find(pid);
  return it == targets_.end() ? 0 : it->second.mapsReads;
}

Grant Profiler::shareOf(const Target& t, double totalBytes) const {
  // In floating point: budget x bytes overflows 64 bits for terabyte reservations (ASan's
  // shadow, JVM and Go heaps).
  const double part = totalBytes > 0 ? std::min(1.0, double(t.regions->bytes()) / totalBytes) : 0;
  return {static_cast<uint64_t>(double(controller_.checks()) * part), static_cast<uint64_t>(double(controller_.budgetNs()) * part)};
}

void Profiler::prime() {
  const uint64_t cpu0 = threadCpuNs(), wall0 = clockNs(CLOCK_MONOTONIC);
  double totalBytes = 0;
  for (auto& [pid, t] : targets_) totalBytes += double(t.regions->bytes());
  for (auto& [pid, t] : targets_) {
    const Grant share = shareOf(t, totalBytes);
    for (auto* s : t.sources) {
      if (!s->primes()) continue;
      // A failure here (the process exiting, most often) shows again in runInterval, which
      // handles it; the source then prepares in observe().
      if (auto st = s->prime(pid, *t.regions, share); !st.ok()) MTM_DEBUG("profiler pid={} prime error=\"{}\"", pid, st.error().message());
    }
  }
  primeCpuNs_ += threadCpuNs() - cpu0;
  primeEndNs_ = clockNs(CLOCK_MONOTONIC);
  primeWallNs_ = primeEndNs_ - wall0;
}

std::chrono::milliseconds Profiler::primeLead() const {
  const bool primes = std::any_of(sources_.begin(), sources_.end(), [](const auto& s) { return s->primes(); });
  if (!primes || config_.profiler.abitWindowMs == 0) return std::chrono::milliseconds(0);
  // A slow clearing (emulation, a machine under load) stretches the lead, never past most of
  // the interval: the interval's own work comes after it.
  return std::chrono::milliseconds(
      std::min<uint64_t>(config_.profiler.abitWindowMs + primeWallNs_ / 1000000, uint64_t{config_.profiler.intervalMs} * 3 / 4));
}

Snapshot Profiler::runInterval() {
  // A prime that ran longer than its lead allowed (more checks than the last, a slower clear)
  // cleared its last pages less than the window before now: wait out the rest. On the
  // development host, with a 20 ms window, intervals whose checks rose 2-4x read 0.16-0.61 of
  // the hot set against 0.8-0.96 in the others.
  if (const uint64_t primed = std::exchange(primeEndNs_, 0); primed != 0) {
    const uint64_t due = primed + uint64_t{config_.profiler.abitWindowMs} * 1000000, now = clockNs(CLOCK_MONOTONIC);
    if (now < due) std::this_thread::sleep_for(std::chrono::nanoseconds(due - now));
  }
  const uint64_t cpu0 = threadCpuNs();
  Snapshot snap;
  snap.interval = interval_++;
  const uint64_t budget = controller_.checks();
  std::vector<int> gone;
  // The address spaces may have changed: read them again (cheap next to the checks), then share
  // the checks by size.
  std::vector<std::pair<int, Target*>> live;
  double totalBytes = 0;
  // Where the interval's CPU time goes, for the debug log: layout, each source, regions.
  std::vector<uint64_t> sourceNs(sources_.size(), 0);
  uint64_t regionsNs = 0;
  uint32_t changes = 0;
  for (auto& [pid, t] : targets_) {
    if (auto st = refreshLayout(pid, t); !st.ok()) {
      gone.push_back(pid);
      continue;
    }
    live.emplace_back(pid, &t);
    totalBytes += double(t.regions->bytes());
  }
  const uint64_t layoutNs = threadCpuNs() - cpu0;
  for (auto& [pid, target] : live) {
    Target& t = *target;
    const Grant share = shareOf(t, totalBytes);
    bool alive = true;
    for (auto* s : t.sources) {
      const uint64_t s0 = threadCpuNs();
      auto spent = s->observe(pid, *t.regions, share);
      for (size_t i = 0; i < sources_.size(); ++i)
        if (sources_[i].get() == s) sourceNs[i] += threadCpuNs() - s0;
      if (!spent) {
        if (spent.error().errnum() == ESRCH || !proc_.exists("/proc/" + std::to_string(pid)))
          alive = false;
        else if (unsigned held = 0; warnLimit_.allow(std::chrono::steady_clock::now(), held))
          MTM_WARN("profiler pid={} observe error=\"{}\" suppressed={}", pid, spent.error().message(), held);
        continue;
      }
      snap.checks += *spent;
    }
    if (!alive) {
      gone.push_back(pid);
      continue;
    }
    const uint64_t r0 = threadCpuNs();
    changes += t.regions->endInterval().changes;
    for (const auto& r : t.regions->regions()) {
      RegionInfo info{pid, r.start, r.end, r.hotness, r.age, r.confidence, r.node, -1, r.huge, r.skew, r.hotEighths};
      if (tiers_ && r.node >= 0) info.tier = tiers_->tierOfNode(r.node);
      snap.regions.push_back(info);
    }
    regionsNs += threadCpuNs() - r0;
  }
  for (int pid : gone) {
    MTM_INFO("profiler pid={} gone=yes", pid);
    removeTarget(pid);
    snap.exited.push_back(pid);
  }
  const uint64_t primeNs = std::exchange(primeCpuNs_, 0);
  snap.cpuNs = threadCpuNs() - cpu0 + primeNs;
  if (log::get().should_log(spdlog::level::debug)) {
    std::string bySource;
    for (size_t i = 0; i < sources_.size(); ++i) bySource += fmt::format(" {}_us={}", names_[i], sourceNs[i] / 1000);
    MTM_DEBUG("profiler interval={} cpu_us={} prime_us={} layout_us={}{} regions_us={} checks={} granted={} regions={} changes={}",
              snap.interval, snap.cpuNs / 1000, primeNs / 1000, layoutNs / 1000, bySource, regionsNs / 1000, snap.checks, budget,
              snap.regions.size(), changes);
  }
  controller_.report(std::max<uint64_t>(snap.checks, 1), snap.cpuNs, std::exchange(attachedSinceInterval_, false));
  snap.seconds = double(clockNs(CLOCK_MONOTONIC) - startNs_) / 1e9;
  return snap;
}

}  // namespace mtm::profiler
