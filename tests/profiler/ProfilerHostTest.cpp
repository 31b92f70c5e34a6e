// The profiler on this machine's kernel: software page-fault samples through the real perf ring
// buffer, and the accessed-bit source finding a workload's known hot set.
#include <catch2/catch.hpp>

#include <sstream>

#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <thread>

#include "ChildProcess.h"
#include "HotSetScore.h"
#include "Run.h"
#include "Skip.h"
#include "mtm/Registry.h"
#include "mtm/config/ConfigLoader.h"
#include "mtm/profiler/PerfSampler.h"
#include "mtm/profiler/Profiler.h"
#include "mtm/profiler/Source.h"

using namespace mtm;

namespace {

// What profileHotSet found: the mean score of the last intervals, and every interval's figures.
struct Profiled {
  bench::Score mean{0, 0};
  std::string intervals;  // one line each, for the test's INFO
};

// Intervals averaged by profileHotSet: one interval's accessed bits are a sample (a hot page
// whose translation stays in the TLB may not set its bit within the window; the workload may be
// descheduled through one), the profiler's quality is what it finds over several.
constexpr int kScoredIntervals = 5;

// mtm-test-hotset's arguments for one 60 s phase of 256 MiB, a tenth hot, its truth and ready
// files in `dir`, `extra` added.
std::vector<std::string> hotSetArgs(const test::TempDir& dir, const std::vector<std::string>& extra) {
  std::vector<std::string> args{test::bin("mtm-test-hotset"),
                                "--size",
                                "256M",
                                "--hot-fraction",
                                "0.1",
                                "--phases",
                                "1",
                                "--phase-seconds",
                                "60",
                                "--truth",
                                dir.path() + "/truth",
                                "--ready",
                                dir.path() + "/ready"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

// Profiles a 256 MiB mtm-test-hotset (one phase, `extra` arguments added) with the accessed-bit
// source for `intervals` intervals, primed as mtmd primes it, and scores the hot regions of each
// of the last kScoredIntervals against the workload's truth.
Profiled profileHotSet(const std::vector<std::string>& extra, const config::Config& cfg, int intervals) {
  test::TempDir dir;
  const std::string truthFile = dir.path() + "/truth";
  test::ChildProcess workload(hotSetArgs(dir, extra), dir.path() + "/log");
  REQUIRE(!test::waitForFile(dir.path() + "/ready", 60).empty());
  auto prof = profiler::Profiler::create(cfg);
  REQUIRE(prof.ok());
  REQUIRE((*prof)->addTarget(workload.pid()).ok());
  bench::HotSetTruth truth;
  truth.granules = 128;
  Profiled found;
  std::ostringstream lines;
  const std::chrono::milliseconds interval(cfg.profiler.intervalMs);
  for (int i = 0; i < intervals; ++i) {
    const auto lead = (*prof)->primeLead();
    std::this_thread::sleep_for(interval - lead);
    if (lead.count() > 0) {
      (*prof)->prime();
      std::this_thread::sleep_for(std::chrono::milliseconds(cfg.profiler.abitWindowMs));
    }
    auto snap = (*prof)->runInterval();
    truth.update(truthFile);
    REQUIRE(!truth.phases.empty());
    const bench::Score score = bench::score(bench::hotRanges(snap, cfg.policy.hotThreshold), truth, truth.phases.back());
    const bool scored = i >= intervals - kScoredIntervals;
    if (scored) {
      found.mean.precision += score.precision / kScoredIntervals;
      found.mean.recall += score.recall / kScoredIntervals;
    }
    lines << "interval " << i << (scored ? " (scored)" : "") << ": precision " << score.precision << " recall " << score.recall
          << " regions " << snap.regions.size() << " checks " << snap.checks << "\n";
  }
  found.intervals = lines.str();
  return found;
}

// The accessed-bit source alone, every 300 ms, with a budget that lets it find the set: these
// tests are about finding it, not about the budget.
config::Config abitConfig() {
  config::Config cfg = config::defaultConfig();
  cfg.profiler.sources = {"ebpf_abit"};
  cfg.profiler.intervalMs = 300;
  cfg.profiler.budget = 0.05;
  return cfg;
}

// Software page-fault samples, period 1, with addresses.
perf_event_attr pageFaults() {
  perf_event_attr attr{};
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_PAGE_FAULTS;
  attr.sample_period = 1;
  attr.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_ADDR;
  return attr;
}

// The calling thread's page faults, in a 16-page ring.
Result<std::unique_ptr<profiler::PerfEvent>> openOwnPageFaults() {
  return profiler::PerfEvent::open(pageFaults(), static_cast<int>(gettid()), 16);
}

// Whether a sample's address lies in the `pages` 4 KiB pages at `p`.
bool inPages(const profiler::Sample& s, const volatile char* p, size_t pages) {
  const auto a = reinterpret_cast<uintptr_t>(p);
  return s.addr >= a && s.addr < a + pages * 4096;
}

}  // namespace

TEST_CASE("software page-fault samples flow through the real perf ring buffer", "[profiler][host]") {
  auto ev = openOwnPageFaults();
  if (!ev) MTM_SKIP("perf_event_open refused here: " << ev.error().message());
  constexpr size_t kPages = 64;
  auto* p = static_cast<volatile char*>(mmap(nullptr, kPages * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  for (size_t i = 0; i < kPages; ++i) p[i * 4096] = 1;  // one fault a page
  size_t inside = 0;
  auto stats = (*ev)->drain([&](const profiler::Sample& s) {
    if (inPages(s, p, kPages) && s.tid == static_cast<uint32_t>(gettid())) ++inside;
  });
  munmap(const_cast<char*>(p), kPages * 4096);
  CHECK(inside == kPages);
  CHECK(stats.lost == 0);
  CHECK(stats.truncated == 0);
}

TEST_CASE("a burst of page faults is read up to the cap and the rest dropped", "[profiler][host]") {
  auto ev = openOwnPageFaults();
  if (!ev) MTM_SKIP("perf_event_open refused here: " << ev.error().message());
  constexpr size_t kPages = 512, kCap = 100;
  auto* p = static_cast<volatile char*>(mmap(nullptr, kPages * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  for (size_t i = 0; i < kPages; ++i) p[i * 4096] = 1;
  size_t seen = 0;
  auto stats = (*ev)->drain([&](const profiler::Sample&) { ++seen; }, kCap);
  CHECK(seen == kCap);
  CHECK(stats.samples == kCap);
  CHECK(stats.skippedBytes > 0);
  // The dropped ones are gone. Faults made since (the test's own, a sanitizer's
  // shadow memory) may be read, but none of them lies in the burst's pages.
  size_t burstAgain = 0;
  auto again = (*ev)->drain([&](const profiler::Sample& s) {
    if (inPages(s, p, kPages)) ++burstAgain;
  });
  munmap(const_cast<char*>(p), kPages * 4096);
  CHECK(burstAgain == 0);
  CHECK(again.lost == 0);
}

TEST_CASE("a sampler reads a process's burst of faults up to its cap", "[profiler][host]") {
  int go[2], done[2];
  REQUIRE(pipe(go) == 0);
  REQUIRE(pipe(done) == 0);
  constexpr size_t kPages = 2048;
  const pid_t child = fork();
  if (child == 0) {
    char c;
    if (read(go[0], &c, 1) != 1) _exit(1);
    auto* p = static_cast<volatile char*>(mmap(nullptr, kPages * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    for (size_t i = 0; i < kPages; ++i) p[i * 4096] = 1;
    if (write(done[1], "x", 1) != 1) _exit(1);
    pause();
    _exit(0);
  }
  profiler::PerfSampler sampler(pageFaults(), 1);
  const auto attached = sampler.attach(child);
  char c;
  if (attached.ok()) {
    REQUIRE(write(go[1], "x", 1) == 1);
    REQUIRE(read(done[0], &c, 1) == 1);
  }
  profiler::RegionSet regions(config::defaultConfig().profiler);
  constexpr uint64_t kWanted = 16;
  auto first =
      attached.ok() ? sampler.observe(child, regions, kWanted, profiler::Mapping::fault) : Result<profiler::RingStats>(attached.error());
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  for (int fd : {go[0], go[1], done[0], done[1]}) close(fd);
  if (!attached.ok()) MTM_SKIP("perf_event_open refused here: " << attached.error().message());
  REQUIRE(first.ok());
  CHECK(first->samples == profiler::PerfSampler::kReadFactor * kWanted);
  CHECK(first->skippedBytes + first->lost > 0);
}

TEST_CASE("the profiler finds a workload's known hot set", "[profiler][host][profiler-e2e][serial]") {
  MTM_REQUIRE_ROOT("the accessed-bit source");
  const Profiled found = profileHotSet({}, abitConfig(), 12);
  INFO(found.intervals);
  CHECK(found.mean.precision >= 0.8);
  CHECK(found.mean.recall >= 0.8);
}

// Not [profiler-e2e] (which the VM lab runs too): the trickle's pace is this machine's CPU's; in
// the TCG guest the same arguments read the cold pages far more rarely, and the 30-60 checks an
// interval there leave regions too coarse for the precision asked here.
// [serial]: seen failing in a CI run beside the cxl tests (recall 0.56): the hot loop, short of
// CPU, left its pages untouched through whole windows.
TEST_CASE("memory read at a trickle is not hot: accessed bits are read a window after they are cleared", "[profiler][host][serial]") {
  MTM_REQUIRE_ROOT("the accessed-bit source");
  // Every page of the cold majority is read now and then (a trickle: at 0.002, on the first
  // development host's CPU, about every 100 ms), the hot tenth all the time: read a whole 300 ms
  // interval after clearing, two thirds of the cold pages looked accessed too (mtmctl profile
  // showed 125-160 MiB hot of 256).
  // The window is the default's 100 ms, not 10: on an AMD EPYC VM host a hot page's accessed bit,
  // cleared without a TLB flush, was often not set again within 10 ms however often the page was
  // written (its translation stays in the TLB, which with 4 KiB pages coalesced holds the whole
  // 26 MiB hot set): 6-30% of the hot set read hot at 10 ms, all of it at 50; on a later host of
  // the same kind 56-88% an interval at 50 ms (a CI run failed at a mean of 0.79). The trickle,
  // one cold page every other pass over the hot set, is a twentieth of the first one (13 a pass),
  // so that a 100 ms window sees no more cold pages read than a 10 ms one did then. (At one a
  // pass, a later host of the same kind read a mean precision of 0.69-0.73 in four runs of five.)
  config::Config cfg = abitConfig();
  cfg.profiler.abitWindowMs = 100;
  const Profiled found = profileHotSet({"--trickle", "0.0001"}, cfg, 15);
  INFO(found.intervals);
  // Region edges and the odd cold page read within the window keep some cold memory in hot
  // regions: precision below the idle-cold test's. Measured on the 2026-12-03 host: a mean of
  // 0.83-0.85 with the window (three runs); 0.65-0.70 (two runs) with bits read a whole interval
  // after clearing (window 0). On the 2026-12-06 host: 0.72-0.82 with the window (twelve runs;
  // the bar of 0.75 failed five, three in a fresh clone's build), 0.58-0.61 with window 0 (three).
  CHECK(found.mean.precision >= 0.7);
  CHECK(found.mean.recall >= 0.8);
}

TEST_CASE("fallback sources run only when none of the sources can", "[profiler][host]") {
  if (auto ev = openOwnPageFaults(); !ev) MTM_SKIP("perf_event_open refused here: " << ev.error().message());
  config::Config cfg = config::defaultConfig();
  cfg.profiler.sources = {"page_fault"};
  cfg.profiler.fallbackSources = {"ebpf_abit"};  // one that can run here (as root): still not run
  auto prof = profiler::Profiler::create(cfg);
  REQUIRE(prof.ok());
  CHECK((*prof)->activeSources() == std::vector<std::string>{"page_fault"});

  // hw_sample runs where its own probe passes (a PMU with precise load sampling), and page_fault
  // stands in for it where it does not (this development machine, CI).
  auto hw = Registry<profiler::Source>::create("hw_sample", {cfg});
  REQUIRE(hw.ok());
  const bool pmu = (*hw)->probe().ok();
  cfg.profiler.sources = {"hw_sample"};
  cfg.profiler.fallbackSources = {"page_fault"};
  prof = profiler::Profiler::create(cfg);
  REQUIRE(prof.ok());
  INFO("hardware PMU: " << pmu);
  if (pmu) CHECK((*prof)->activeSources().front() == "hw_sample");
  if (!pmu) CHECK((*prof)->activeSources() == std::vector<std::string>{"page_fault"});
  if (!pmu) {
    cfg.profiler.fallbackSources.clear();
    auto none = profiler::Profiler::create(cfg);
    REQUIRE_FALSE(none.ok());
    CHECK(none.error().message().find("no profiler source can run here (hw_sample: ") != std::string::npos);
  }
}

TEST_CASE("the profiler refuses a process it cannot see and drops one that exits", "[profiler][host]") {
  MTM_REQUIRE_ROOT("the accessed-bit source");
  config::Config cfg = config::defaultConfig();
  cfg.profiler.sources = {"ebpf_abit"};
  auto prof = profiler::Profiler::create(cfg);
  REQUIRE(prof.ok());
  auto missing = (*prof)->addTarget(999999);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().message().find("pid 999999") != std::string::npos);
  CHECK(missing.error().message().find("no such process") != std::string::npos);

  test::TempDir dir;
  test::ChildProcess sleeper({"/bin/sleep", "30"}, dir.path() + "/log");
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const int pid = sleeper.pid();
  REQUIRE((*prof)->addTarget(pid).ok());
  (*prof)->runInterval();
  sleeper.signal(SIGKILL);
  sleeper.wait();
  auto snap = (*prof)->runInterval();
  CHECK(snap.exited == std::vector<int>{pid});
  CHECK((*prof)->targetCount() == 0);
}

TEST_CASE("eBPF follows the address space: /proc/PID/maps is read again only when it changed", "[profiler][host][profiler-e2e]") {
  MTM_REQUIRE_ROOT("the accessed-bit source");
  config::Config cfg = config::defaultConfig();
  cfg.profiler.sources = {"ebpf_abit"};
  cfg.profiler.intervalMs = 100;
  auto prof = profiler::Profiler::create(cfg);
  REQUIRE(prof.ok());
  test::TempDir dir;
  // One process that sits still, one whose layout keeps changing.
  test::ChildProcess still({"/bin/sleep", "30"}, dir.path() + "/still");
  pid_t remapping = fork();
  if (remapping == 0) {  // maps and unmaps a page every 10 ms
    for (;;) {
      void* p = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      usleep(10000);
      munmap(p, 4096);
    }
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  REQUIRE((*prof)->addTarget(still.pid()).ok());
  REQUIRE((*prof)->addTarget(remapping).ok());
  for (int i = 0; i < 6; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    (*prof)->runInterval();
  }
  // The still one: read at attach and once more when the generation first became known.
  CHECK((*prof)->mapsReads(still.pid()) <= 2);
  CHECK((*prof)->mapsReads(remapping) >= 4);
  kill(remapping, SIGKILL);
  waitpid(remapping, nullptr, 0);
}

TEST_CASE("mtmctl profile records intervals that mtmctl heatmap draws", "[profiler][host][cli]") {
  MTM_REQUIRE_ROOT("the accessed-bit source");
  test::TempDir dir;
  const std::string ready = dir.path() + "/ready";
  test::ChildProcess workload({test::bin("mtm-test-hotset"), "--size", "64M", "--phases", "1", "--phase-seconds", "60", "--truth",
                               dir.path() + "/truth", "--ready", ready},
                              dir.path() + "/log");
  REQUIRE(!test::waitForFile(ready, 60).empty());
  const std::string rec = dir.path() + "/p.jsonl";
  auto r = test::run({test::bin("mtmctl"), "profile", "--pid", std::to_string(workload.pid()), "--duration", "1", "--interval-ms", "200",
                      "--source", "ebpf_abit", "--record", rec});
  INFO(r.err);
  REQUIRE(r.exitCode == 0);
  CHECK(r.out.find("# profiling 1 process(es) with ebpf_abit, interval 200 ms") != std::string::npos);
  CHECK(r.out.find("hottest regions:") != std::string::npos);
  // As JSON: an object a line per interval, then the hottest regions.
  auto json = test::run({test::bin("mtmctl"), "profile", "--pid", std::to_string(workload.pid()), "--duration", "1", "--interval-ms", "200",
                         "--source", "ebpf_abit", "--format", "json"});
  REQUIRE(json.exitCode == 0);
  std::vector<std::string> lines;
  std::istringstream in(json.out);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  REQUIRE(lines.size() >= 2);
  CHECK(lines.front().rfind("{\"interval\":", 0) == 0);
  CHECK(lines.front().find("\"checks\":") != std::string::npos);
  CHECK(lines.back().rfind("{\"hottest\":[{\"pid\":" + std::to_string(workload.pid()), 0) == 0);
  auto svg = test::run({test::bin("mtmctl"), "heatmap", rec, "-o", dir.path() + "/h.svg"});
  CHECK(svg.exitCode == 0);
  CHECK(test::readFile(dir.path() + "/h.svg").rfind("<svg", 0) == 0);
  auto png = test::run({test::bin("mtmctl"), "heatmap", rec, "-o", dir.path() + "/h.png"});
  CHECK(png.exitCode == 0);
  CHECK(test::readFile(dir.path() + "/h.png").substr(1, 3) == "PNG");
  // Without rsvg-convert, a PNG says how to get it (and an SVG still works).
  auto noConverter = test::run({"/usr/bin/env", "PATH=/nonexistent", test::bin("mtmctl"), "heatmap", rec, "-o", dir.path() + "/n.png"});
  CHECK(noConverter.exitCode == 1);
  CHECK(noConverter.err == "mtmctl: a PNG heatmap needs rsvg-convert (apt-get install librsvg2-bin); or write " + dir.path() + "/n.svg\n");
  auto bad = test::run({test::bin("mtmctl"), "heatmap", rec, "-o", dir.path() + "/h.gif"});
  CHECK(bad.exitCode == 2);
  auto dead = test::run({test::bin("mtmctl"), "profile", "--pid", "999999", "--duration", "1"});
  CHECK(dead.exitCode == 1);
  CHECK(dead.err.find("pid 999999") != std::string::npos);
}

TEST_CASE("a check reads a whole window after its clear even when the prime ran late", "[profiler][host]") {
  MTM_REQUIRE_ROOT("the accessed-bit source");
  test::TempDir dir;
  test::ChildProcess workload(hotSetArgs(dir, {}), dir.path() + "/log");
  REQUIRE(!test::waitForFile(dir.path() + "/ready", 60).empty());
  config::Config cfg = abitConfig();
  cfg.profiler.abitWindowMs = 150;
  auto prof = profiler::Profiler::create(cfg);
  REQUIRE(prof.ok());
  REQUIRE((*prof)->addTarget(workload.pid()).ok());
  (void)(*prof)->runInterval();
  // Called with no lead at all, as when a prime takes longer than the last: the read waits.
  (*prof)->prime();
  const auto primed = std::chrono::steady_clock::now();
  (void)(*prof)->runInterval();
  CHECK(std::chrono::steady_clock::now() - primed >= std::chrono::milliseconds(cfg.profiler.abitWindowMs));
}
