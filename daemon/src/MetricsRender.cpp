#include "mtm/daemon/MetricsRender.h"

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <map>
#include <sstream>
#include <vector>

#include "mtm/migrate/Mover.h"

namespace mtm::daemon {
namespace {

using prometheus::Labels;

// The manager's figures at one moment, copied so that they can be rendered on another thread.
struct ManagerFigures {
  std::string policy, mover, configSource;
  double budget = 0;
  std::vector<config::Tier> tiers;
  std::vector<uint64_t> managedBytes;
  std::vector<TierStats> tierStats;
  std::map<int, TargetStats> targets;
  ManagerTotals totals;
  size_t regions = 0;
  std::vector<std::string> sources;
  uint64_t pagesInFlight = 0;
  double moveBytesPerSecond = 0;
  bool predicting = false;
  policy::PredictionReport prediction;
};

ManagerFigures figuresOf(const Manager& m) {
  return {m.config().policy.name,
          m.config().migration.mover,
          m.config().source,
          m.config().profiler.budget,
          m.machine().tiers.tiers,
          m.tierTotals(0),
          m.tierStats(),
          m.targets(),
          m.totals(),
          m.lastSnapshot().regions.size(),
          m.profiler().activeSources(),
          m.pagesInFlight(),
          m.moveBytesPerSecond(),
          m.config().policy.predict.mode == "on",
          m.prediction()};
}

// The kernel's counters of tiering and NUMA balancing in /proc/vmstat.
bool isTieringCounter(const std::string& name) {
  for (const char* prefix : {"pgpromote_", "pgdemote_", "pgmigrate_", "numa_hint_", "numa_pages_migrated"})
    if (name.rfind(prefix, 0) == 0) return true;
  return false;
}

std::string nodeList(const std::vector<int>& nodes) {
  std::string out;
  for (int n : nodes) out += (out.empty() ? "" : ",") + std::to_string(n);
  return out;
}

prometheus::Family<prometheus::Gauge>& gauge(prometheus::Registry& r, const std::string& name, const std::string& help) {
  return prometheus::BuildGauge().Name(name).Help(help).Register(r);
}

prometheus::Family<prometheus::Counter>& counter(prometheus::Registry& r, const std::string& name, const std::string& help) {
  return prometheus::BuildCounter().Name(name).Help(help).Register(r);
}

void renderTiers(prometheus::Registry& r, const ManagerFigures& m) {
  auto& capacity = gauge(r, "mtm_tier_capacity_bytes", "Memory mtm may fill in the tier (tiers.list[].capacity, else all of it)");
  auto& free = gauge(r, "mtm_tier_free_bytes", "Free memory of the tier's nodes, read at the last interval");
  auto& reserve =
      gauge(r, "mtm_tier_kernel_reserve_bytes", "Memory the kernel keeps free for itself in the tier (min_free_kbytes, lowmem reserve)");
  auto& low = gauge(r, "mtm_tier_low_watermark_ratio", "Effective low watermark: promotion into the tier stops below this free share");
  auto& managed = gauge(r, "mtm_tier_managed_bytes", "Profiled memory of the managed processes in the tier");
  auto& promotedIn = counter(r, "mtm_tier_promoted_in_pages_total", "4 KiB pages promoted into the tier");
  auto& demotedIn = counter(r, "mtm_tier_demoted_in_pages_total", "4 KiB pages demoted into the tier");
  for (const auto& tier : m.tiers) {
    const Labels labels{{"tier", tier.name}};
    auto withNodes = labels;
    withNodes["nodes"] = nodeList(tier.nodes);
    capacity.Add(withNodes).Set(double(tier.capacityBytes));
    free.Add(labels).Set(double(tier.freeBytes));
    reserve.Add(labels).Set(double(tier.kernelReserveBytes));
    low.Add(labels).Set(tier.lowWatermark);
    managed.Add(labels).Set(double(m.managedBytes[tier.index]));
    promotedIn.Add(labels).Increment(double(m.tierStats[tier.index].promotedInPages));
    demotedIn.Add(labels).Increment(double(m.tierStats[tier.index].demotedInPages));
  }
}

void renderTargets(prometheus::Registry& r, const ManagerFigures& m) {
  auto& count = gauge(r, "mtm_targets", "Processes mtm manages");
  auto& bytes = gauge(r, "mtm_target_bytes", "Profiled memory of a managed process, by the tier its pages are in");
  auto& hot = gauge(r, "mtm_target_hot_bytes", "Memory of a managed process at or above policy.hot_threshold");
  auto& hotTop = gauge(r, "mtm_target_hot_top_tier_bytes", "Hot memory of a managed process that is in the fastest tier");
  auto& promoted = counter(r, "mtm_target_promoted_pages_total", "4 KiB pages of the process promoted since it was attached");
  auto& demoted = counter(r, "mtm_target_demoted_pages_total", "4 KiB pages of the process demoted since it was attached");
  auto& pingPong =
      counter(r, "mtm_target_pingpong_pages_total", "4 KiB pages moved back the way they came within policy.pingpong_window_s");
  auto& failed = counter(r, "mtm_target_failed_pages_total", "4 KiB pages of the process that did not move, by errno");
  count.Add({}).Set(double(m.targets.size()));
  for (const auto& [pid, t] : m.targets) {
    const Labels who{{"pid", std::to_string(pid)}, {"comm", t.comm}, {"cgroup", t.cgroup}};
    for (const auto& tier : m.tiers) {
      auto labels = who;
      labels["tier"] = tier.name;
      bytes.Add(labels).Set(double(size_t(tier.index) < t.tierBytes.size() ? t.tierBytes[tier.index] : 0));
    }
    hot.Add(who).Set(double(t.hotBytes));
    hotTop.Add(who).Set(double(t.hotTopBytes));
    promoted.Add(who).Increment(double(t.promotedPages));
    demoted.Add(who).Increment(double(t.demotedPages));
    pingPong.Add(who).Increment(double(t.pingPongPages));
    for (const auto& [err, pages] : t.failedByErrno) {
      auto labels = who;
      labels["errno"] = errnoName(err);
      failed.Add(labels).Increment(double(pages));
    }
  }
}

void renderProfilerAndMover(prometheus::Registry& r, const ManagerFigures& m) {
  const auto& totals = m.totals;
  counter(r, "mtm_intervals_total", "Profiling and placement intervals run").Add({}).Increment(double(totals.intervals));
  counter(r, "mtm_profiler_checks_total", "Page checks the profiler spent (accessed bits, samples)")
      .Add({})
      .Increment(double(totals.profilerChecks));
  counter(r, "mtm_profiler_cpu_seconds_total", "CPU time the profiler spent").Add({}).Increment(double(totals.profilerCpuNs) / 1e9);
  gauge(r, "mtm_profiler_budget_ratio", "The profiler's budget: CPU time per second of one core (profiler.budget)").Add({}).Set(m.budget);
  gauge(r, "mtm_profiler_regions", "Regions the profiler tracked at the last interval").Add({}).Set(double(m.regions));
  auto& sources = gauge(r, "mtm_profiler_source_info", "Access sources the profiler runs (1 each)");
  for (const auto& s : m.sources) sources.Add({{"source", s}}).Set(1);
  gauge(r, "mtm_mover_pages_in_flight", "4 KiB pages handed to the move worker and not yet done").Add({}).Set(double(m.pagesInFlight));
  gauge(r, "mtm_mover_rate_bytes_per_second", "The mover's measured rate: bytes over seconds of its recent runs")
      .Add({})
      .Set(m.moveBytesPerSecond);
}

// Predictive placement (policy.predict), when it is on.
void renderPrediction(prometheus::Registry& r, const ManagerFigures& m) {
  if (!m.predicting) return;
  const auto& p = m.prediction;
  gauge(r, "mtm_predict_groups", "Groups of memory that turn hot together, learned over all targets").Add({}).Set(double(p.groups));
  gauge(r, "mtm_predict_active_groups", "Of them, hot at the last interval (the current phases)").Add({}).Set(double(p.activeGroups));
  gauge(r, "mtm_predict_transitions", "Learned links: this group's onset follows that one's").Add({}).Set(double(p.transitions));
  counter(r, "mtm_predict_predictions_total", "Groups promoted ahead of their expected onset").Add({}).Increment(double(p.predictions));
  counter(r, "mtm_predict_hits_total", "Predicted groups that turned hot in time").Add({}).Increment(double(p.hits));
  counter(r, "mtm_predict_misses_total", "Predicted groups that did not turn hot in time").Add({}).Increment(double(p.misses));
  counter(r, "mtm_predict_bytes_total", "Memory predicted hot, summed over predictions").Add({}).Increment(double(p.predictedBytes));
  counter(r, "mtm_predict_mispredicted_bytes_total", "Memory predicted hot that did not turn hot in time")
      .Add({})
      .Increment(double(p.mispredictedBytes));
}

void renderKernel(prometheus::Registry& r, const KernelFs& fs) {
  auto vmstat = fs.read("proc/vmstat");
  if (!vmstat) return;
  auto& events = counter(r, "mtm_kernel_vmstat_total", "The kernel's tiering, migration and NUMA-balancing counters (/proc/vmstat)");
  std::istringstream in(*vmstat);
  std::string name;
  double value = 0;
  while (in >> name >> value)
    if (isTieringCounter(name)) events.Add({{"counter", name}}).Increment(value);
}

}  // namespace

MetricsRecorder::MetricsRecorder() : histograms_(std::make_shared<prometheus::Registry>()) {
  intervalSeconds_ = &prometheus::BuildHistogram()
                          .Name("mtm_interval_duration_seconds")
                          .Help("Time one interval's work took: profiling, plan, hand-off to the mover")
                          .Register(*histograms_)
                          .Add({}, prometheus::Histogram::BucketBoundaries{0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5});
  planPages_ = &prometheus::BuildHistogram()
                    .Name("mtm_plan_pages")
                    .Help("4 KiB pages an interval's plan moved or asked to move")
                    .Register(*histograms_)
                    .Add({}, prometheus::Histogram::BucketBoundaries{0, 256, 1024, 4096, 16384, 65536, 262144, 1048576});
}

MetricsRecorder::~MetricsRecorder() = default;

void MetricsRecorder::observeInterval(double seconds, const IntervalReport& report) {
  intervalSeconds_->Observe(seconds);
  planPages_->Observe(double(report.plannedPages));
}

std::function<std::string()> MetricsRecorder::capture(const Manager& manager, const KernelFs& fs) const {
  // The histograms are shared: prometheus-cpp's Observe and Collect may run on two threads.
  return [m = std::make_shared<const ManagerFigures>(figuresOf(manager)), fs, histograms = histograms_] {
    prometheus::Registry now;
    gauge(now, "mtm_build_info", "mtm's version (1)").Add({{"version", MTM_VERSION}}).Set(1);
    gauge(now, "mtm_config_info", "The policy and mover of the config in use (1)")
        .Add({{"policy", m->policy}, {"mover", m->mover}, {"config", m->configSource}})
        .Set(1);
    renderTiers(now, *m);
    renderTargets(now, *m);
    renderProfilerAndMover(now, *m);
    renderPrediction(now, *m);
    renderKernel(now, fs);
    auto families = now.Collect();
    for (auto& f : histograms->Collect()) families.push_back(std::move(f));
    return prometheus::TextSerializer().Serialize(families);
  };
}

}  // namespace mtm::daemon
