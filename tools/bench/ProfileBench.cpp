// mtm-bench-profile: profiling quality at a CPU budget. A workload with known hot sets that
// move every phase (mtm-test-hotset) runs while mtm's profiler -- and, where the kernel has it
// and it is free, DAMON vaddr, in the same run -- watches it. Per interval: precision and recall
// of the hot 2 MiB regions against the workload's truth, and each profiler's CPU time.

#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include <CLI/CLI.hpp>

#include "BenchReport.h"
#include "HotSetScore.h"
#include "mtm/Log.h"
#include "mtm/Parse.h"
#include "mtm/config/ConfigLoader.h"
#include "mtm/profiler/Damon.h"
#include "mtm/profiler/Profiler.h"

namespace {
using namespace mtm;
using namespace mtm::bench;
}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"mtm-bench-profile: precision and recall of hot 2 MiB regions at a CPU budget, mtm vs DAMON vaddr", "mtm-bench-profile"};
  std::string size = "1G", budget = "1%", json;
  bool thp = false, withDamon = true;
  double hotFraction = 0.1, phaseSeconds = 10, trickle = 0;
  int phases = 4;
  uint32_t intervalMs = 1000, windowMs = config::defaultConfig().profiler.abitWindowMs;
  app.add_option("--size", size, "Workload size (default 1G)");
  app.add_flag("--thp", thp, "Back the workload with THPs");
  app.add_option("--hot-fraction", hotFraction, "Fraction of 2 MiB regions hot per phase (default 0.1)");
  app.add_option("--phases", phases, "Phases (default 4)");
  app.add_option("--phase-seconds", phaseSeconds, "Seconds per phase (default 10)");
  app.add_option("--interval-ms", intervalMs, "Profiling interval (default 1000)");
  app.add_option("--window-ms", windowMs, "Accessed bits read this long after clearing (profiler.abit_window_ms; default 100)")
      ->check(CLI::Range(0u, 60000u));
  app.add_option("--trickle", trickle, "The cold majority read at a trickle: F x the hot pages a pass (mtm-test-hotset; default 0)")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--budget", budget, "mtm's CPU budget (default 1%)");
  app.add_flag("!--no-damon", withDamon, "Do not run DAMON beside mtm");
  uint64_t damonSampleUs = 20000;
  app.add_option("--damon-sample-us", damonSampleUs, "DAMON's sampling interval (default 20000: a CPU cost near mtm's)");
  app.add_option("--json", json, "Write the results as JSON to FILE");
  CLI11_PARSE(app, argc, argv);
  log::setup("bench", spdlog::level::warn);

  config::Config cfg = config::defaultConfig();
  cfg.profiler.sources = {"ebpf_abit"};
  cfg.profiler.intervalMs = intervalMs;
  cfg.profiler.abitWindowMs = windowMs;
  if (windowMs >= intervalMs) {
    std::fprintf(stderr, "mtm-bench-profile: --window-ms %u must be less than --interval-ms %u\n", windowMs, intervalMs);
    return 2;
  }
  cfg.profiler.budget = parsePercent(budget).valueOr(0.01);
  const std::string dir = std::filesystem::path(std::filesystem::read_symlink("/proc/self/exe")).parent_path();
  const std::string truthPath = "/tmp/mtm-bench-profile." + std::to_string(getpid()) + ".truth";
  const std::string readyPath = truthPath + ".ready";

  pid_t child = fork();
  if (child == 0) {
    std::vector<std::string> args{dir + "/mtm-test-hotset",
                                  "--size",
                                  size,
                                  "--hot-fraction",
                                  std::to_string(hotFraction),
                                  "--phases",
                                  std::to_string(phases),
                                  "--phase-seconds",
                                  std::to_string(phaseSeconds),
                                  "--truth",
                                  truthPath,
                                  "--ready",
                                  readyPath};
    if (thp) args.push_back("--thp");
    if (trickle > 0) args.insert(args.end(), {"--trickle", std::to_string(trickle)});
    std::vector<char*> av;
    for (auto& a : args) av.push_back(a.data());
    av.push_back(nullptr);
    execv(av[0], av.data());
    _exit(127);
  }
  while (!std::filesystem::exists(readyPath)) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  HotSetTruth truth;
  truth.granules = parseSize(size).valueOr(0) / kGranule;

  auto prof = profiler::Profiler::create(cfg);
  if (!prof) {
    std::fprintf(stderr, "mtm-bench-profile: %s\n", prof.error().message().c_str());
    kill(child, SIGKILL);
    return 1;
  }
  if (auto st = (*prof)->addTarget(child); !st.ok()) {
    std::fprintf(stderr, "mtm-bench-profile: %s\n", st.error().message().c_str());
    kill(child, SIGKILL);
    return 1;
  }
  std::unique_ptr<profiler::DamonMonitor> damon;
  std::string damonWhy;
  if (withDamon) {
    profiler::DamonAttrs attrs;
    attrs.sampleUs = damonSampleUs;
    attrs.aggrUs = intervalMs * 1000ull;
    attrs.updateUs = attrs.aggrUs;
    auto d = profiler::DamonMonitor::start(child, attrs);
    if (d)
      damon = std::move(*d);
    else
      damonWhy = d.error().message();
  }

  char title[256];
  std::snprintf(title, sizeof title,
                "mtm profiling quality: %s %s workload, %.0f%% hot, trickle %g, %d phases of %.0f s, interval %u ms, window %u ms",
                size.c_str(), thp ? "THP" : "4 KiB-page", hotFraction * 100, trickle, phases, phaseSeconds, intervalMs, windowMs);
  bench::BenchReport report(title, {{"interval", "", 8, 0},
                                    {"phase", "", 5, 0},
                                    {"since", "s", 5, 1},
                                    {"scored", "", 6, 0},
                                    {"mtm_prec", "", 8, 2},
                                    {"mtm_recall", "", 10, 2},
                                    {"mtm_cpu", "%", 7, 2},
                                    {"checks", "", 8, 0},
                                    {"regions", "", 7, 0},
                                    {"damon_prec", "", 10, 2},
                                    {"damon_recall", "", 12, 2},
                                    {"damon_cpu", "%", 9, 2}});
  report.note("mtm: ebpf_abit, budget " + budget + " of one core; DAMON: " +
              (damon ? "vaddr, sample " + std::to_string(damonSampleUs / 1000) + " ms, aggregation = interval, 10-1000 regions"
                     : "not run (" + (withDamon ? damonWhy : "--no-damon") + ")"));
  report.note("a 2 MiB region counts as predicted hot when hot regions cover half of it; mtm: hotness >= " +
              std::to_string(cfg.policy.hotThreshold).substr(0, 4) + "; DAMON: nr_accesses >= a quarter of its maximum");
  report.note(
      "since: seconds from the phase's start to the interval's end; phase -1: the interval spans a phase change "
      "(or the workload's end), so no one hot set is the truth for it");
  report.note(
      "scored: intervals of phases 1.. (each begun by a phase change) ending 2 intervals or more after it; "
      "phase 0 is the profiler's warm-up");

  const double interval = intervalMs / 1000.0;
  double sums[4] = {0, 0, 0, 0};
  double cpuSum = 0, damonCpuSum = 0, settledCpu = 0, settledDamonCpu = 0;
  int settled = 0, rows = 0;
  double warmedUp = -1;  // seconds from the start until mtm's first interval at >= 0.9 / 0.9
  uint64_t damonCpu0 = damon ? damon->cpuNs() : 0;
  double last = monotonicSeconds();
  while (waitpid(child, nullptr, WNOHANG) == 0) {
    // Primed like mtmd primes it: accessed bits cleared abit_window_ms before the interval ends.
    const double lead = double((*prof)->primeLead().count()) / 1000.0;
    if (lead > 0) {
      std::this_thread::sleep_for(std::chrono::duration<double>(last + interval - lead - monotonicSeconds()));
      (*prof)->prime();
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(last + interval - monotonicSeconds()));
    const double begin = last;
    last = monotonicSeconds();
    auto snap = (*prof)->runInterval();
    truth.update(truthPath);
    const HotPhase* phase = truth.at(last);
    if (!phase || !snap.exited.empty()) break;
    const int phaseIndex = static_cast<int>(phase - truth.phases.data());
    const bool whole = truth.at(begin) == phase && last <= phase->start + phaseSeconds;
    const double since = last - phase->start;
    const bool scored = whole && phaseIndex > 0 && since >= 2 * interval - 0.05;
    const Score m = score(hotRanges(snap, cfg.policy.hotThreshold), truth, *phase);
    Score d{-1, -1};
    double dCpu = -1;
    if (damon) {
      auto regions = damon->regions();
      std::vector<std::pair<uint64_t, uint64_t>> dhot;
      if (regions)
        for (const auto& r : *regions)
          if (r.nrAccesses * 4 >= damon->maxAccesses() && r.nrAccesses > 0) dhot.push_back({r.start, r.end});
      d = score(dhot, truth, *phase);
      const uint64_t c = damon->cpuNs();
      dCpu = 100.0 * double(c - damonCpu0) / (intervalMs * 1e6);
      damonCpu0 = c;
    }
    const double cpu = 100.0 * double(snap.cpuNs) / (intervalMs * 1e6);
    report.row({}, {double(snap.interval), whole ? double(phaseIndex) : -1.0, since, scored ? 1.0 : 0.0, m.precision, m.recall, cpu,
                    double(snap.checks), double(snap.regions.size()), d.precision, d.recall, dCpu});
    ++rows;
    cpuSum += cpu;
    damonCpuSum += dCpu;
    if (whole && phaseIndex == 0 && warmedUp < 0 && m.precision >= 0.9 && m.recall >= 0.9) warmedUp = since;
    if (scored) {
      sums[0] += m.precision;
      sums[1] += m.recall;
      sums[2] += d.precision;
      sums[3] += d.recall;
      settledCpu += cpu;
      settledDamonCpu += dCpu;
      ++settled;
    }
  }
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  std::filesystem::remove(truthPath);
  std::filesystem::remove(readyPath);
  if (settled == 0) {
    std::fprintf(stderr, "mtm-bench-profile: no scored interval (it takes 2 phases or more, each longer than 2 intervals)\n");
    return 1;
  }
  char line[256];
  const double mp = sums[0] / settled, mr = sums[1] / settled, mc = cpuSum / rows;
  std::snprintf(
      line, sizeof line,
      "mtm, 2 intervals or more after a phase change: precision %.2f recall %.2f; CPU %.2f%% of one core (%.2f%% over all intervals)", mp,
      mr, settledCpu / settled, mc);
  report.footer(line);
  if (warmedUp >= 0)
    std::snprintf(line, sizeof line, "mtm warm-up: precision and recall >= 0.9 from %.1f s after the start", warmedUp);
  else
    std::snprintf(line, sizeof line, "mtm warm-up: precision and recall not both >= 0.9 within phase 0");
  report.footer(line);
  if (damon) {
    std::snprintf(line, sizeof line, "DAMON vaddr, same intervals: precision %.2f recall %.2f; CPU %.2f%% of one core (%.2f%% over all)",
                  sums[2] / settled, sums[3] / settled, settledDamonCpu / settled, damonCpuSum / rows);
    report.footer(line);
  }
  const bool pass = mp >= 0.9 && mr >= 0.9 && settledCpu / settled <= cfg.profiler.budget * 100 * 1.2 &&
                    (!damon || (mp >= sums[2] / settled && mr >= sums[3] / settled));
  report.verdict(pass, std::string("target: precision and recall >= 0.9 within 2 intervals of a phase change at <= the budget") +
                           (damon ? ", and at least DAMON's" : ""));
  if (!json.empty()) report.writeJson(json);
  return 0;
}
