// mtm-placement-watch: how well a tiering system places mtm-test-hotset's memory, measured
// from outside with move_pages(2) queries while the workload runs. Every period it reads
// the workload's truth file and asks where the pages are: the current hot set, the previous
// phase's hot set that is no longer hot ("old"), and the rest ("cold"). Per phase: seconds
// until 80% of the hot set is in the top tier, the fractions in the top tier at the phase's
// end, the bytes the kernel migrated during it; over the run: time-weighted fractions, the
// bytes the kernel migrated against the least a clairvoyant placement moves for the same
// phases (the oracle, HotSetScore.h: the top tier's room is its free memory less the kernel's
// reserve plus the workload's memory there, at the sample where that was most), and ping-pong:
// sampled pages seen moving back the way they came within --pingpong-window seconds of their
// last move. The watcher keeps its own memory in the slowest tier, out of the room it measures.
//
//   mtm-placement-watch --pid P --truth FILE --size 512M [--period 0.5] [--json out.json] [--label mtm]
//
// After the run, with the profile mtm recorded (mtmctl run --record): how its hot bytes (regions
// at or above policy.hot_threshold) compare with the true hot set, interval by interval --
// their size, and precision and recall per 2 MiB region.
//   mtm-placement-watch --pid P --truth FILE --size 512M --score-record rec.jsonl [--config mtm.yaml]

#include <numaif.h>
#include <signal.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <thread>

#include "BenchReport.h"
#include "HotSetScore.h"
#include "mtm/KernelFs.h"
#include "mtm/Log.h"
#include "mtm/Parse.h"
#include "mtm/config/ConfigLoader.h"
#include "mtm/config/TierMap.h"
#include "mtm/profiler/Recording.h"

namespace {

using namespace mtm;

constexpr uint64_t kPage = 4096;
constexpr uint64_t kStride = 4;  // query every 4th page of a region: placement is per page, sampled

struct Fractions {
  double hotTop = 0, oldTop = 0, oldNext = 0, oldBottom = 0, coldTop = 0;
  std::string byTier;  // "hot 0.9/0.1/0/0 old ..." per tier, for the sample lines
};

struct PhaseResult {
  double reaction = -1;  // seconds until hotTop >= 0.8; -1: never
  double startTop = -1;  // hotTop at the phase's first sample, within one period of its start
  Fractions end;
  double samples = 0;
  uint64_t migratedAtStart = 0;  // pgmigrate_success at the phase's first sample
};

uint64_t vmstat(const char* key) {
  std::ifstream in("/proc/vmstat");
  std::string k;
  uint64_t v;
  while (in >> k >> v)
    if (k == key) return v;
  return 0;
}

// Sampled pages that moved back the way they came soon after a move.
class PingPongWatch {
 public:
  explicit PingPongWatch(double window) : window_(window) {}
  void observe(const std::vector<int>& tierOf, double now) {
    pages_.resize(tierOf.size());
    for (size_t i = 0; i < tierOf.size(); ++i) {
      auto& p = pages_[i];
      if (tierOf[i] < 0) continue;
      if (p.tier >= 0 && tierOf[i] != p.tier) {
        const int dir = tierOf[i] < p.tier ? 1 : -1;  // 1: up
        if (p.dir == -dir && now - p.since <= window_) ++count_;
        p.dir = dir;
        p.since = now;
      }
      p.tier = tierOf[i];
    }
  }
  uint64_t count() const { return count_; }

 private:
  struct Page {
    int tier = -1, dir = 0;
    double since = 0;
  };
  double window_;
  std::vector<Page> pages_;
  uint64_t count_ = 0;
};

// Per class of regions, how many sampled pages sit in each tier; `tierOf` gets each sampled
// page's tier (-1: not present), in the same order every call.
Result<Fractions> measure(int pid, const bench::HotSetTruth& truth, size_t phase, const config::TierMap& tiers, std::vector<int>& tierOf) {
  std::vector<void*> pages;
  std::vector<int> cls;  // 0 hot, 1 old, 2 cold
  const auto& hot = truth.phases[phase].hot;
  const std::set<uint64_t> none;
  const auto& prev = phase > 0 ? truth.phases[phase - 1].hot : none;
  for (uint64_t g = 0; g < truth.granules; ++g) {
    const int c = hot.count(g) ? 0 : prev.count(g) ? 1 : 2;
    for (uint64_t off = 0; off < bench::kGranule; off += kPage * kStride) {
      pages.push_back(reinterpret_cast<void*>(truth.base + g * bench::kGranule + off));
      cls.push_back(c);
    }
  }
  std::vector<int> status(pages.size(), -1);
  if (move_pages(pid, pages.size(), pages.data(), nullptr, status.data(), 0) != 0)
    return Error::fromErrno("move_pages query of pid " + std::to_string(pid), errno);
  const size_t n = tiers.tiers.size();
  std::vector<double> count(3, 0), inTier(3 * n, 0);
  tierOf.assign(pages.size(), -1);
  for (size_t i = 0; i < pages.size(); ++i) {
    const int tier = status[i] < 0 ? -1 : tiers.tierOfNode(status[i]);
    tierOf[i] = tier;
    if (tier < 0) continue;  // not present
    count[cls[i]] += 1;
    inTier[cls[i] * n + tier] += 1;
  }
  auto frac = [&](int c, size_t tier) { return tier < n && count[c] > 0 ? inTier[c * n + tier] / count[c] : 0.0; };
  Fractions f{frac(0, 0), frac(1, 0), frac(1, 1), n > 1 ? frac(1, n - 1) : 0.0, frac(2, 0), ""};
  for (int c = 0; c < 3; ++c) {
    f.byTier += c == 0 ? " hot" : c == 1 ? " old" : " cold";
    for (size_t t = 0; t < n; ++t) f.byTier += (t ? "/" : " ") + fmt::format("{:.2f}", frac(c, t));
  }
  return f;
}

// The profile's hot bytes for `pid` against the truth, averaged over the intervals that fall in
// a phase; one summary line.
int scoreRecording(const std::string& path, const std::string& truthFile, uint64_t size, int pid, const std::string& configFile) {
  auto cfg = config::loadConfigOrDefault(configFile);
  if (!cfg) return std::fprintf(stderr, "%s\n", cfg.error().message().c_str()), 2;
  auto rec = profiler::readRecording(path);
  if (!rec) return std::fprintf(stderr, "%s\n", rec.error().message().c_str()), 1;
  bench::HotSetTruth truth;
  truth.granules = size / bench::kGranule;
  truth.update(truthFile);
  double est = 0, actual = 0, precision = 0, recall = 0;
  size_t n = 0;
  for (size_t i = 0; i < rec->intervals.size(); ++i) {
    const bench::HotPhase* phase = truth.at(rec->monotonic[i]);
    if (!phase) continue;
    profiler::Snapshot mine;
    for (const auto& r : rec->intervals[i].regions)
      if (r.pid == pid) mine.regions.push_back(r);
    const auto hot = bench::hotRanges(mine, cfg->policy.hotThreshold);
    for (const auto& [s, e] : hot) est += double(e - s);
    actual += double(phase->hot.size() * bench::kGranule);
    const auto sc = bench::score(hot, truth, *phase);
    precision += sc.precision;
    recall += sc.recall;
    ++n;
  }
  if (n == 0) return std::fprintf(stderr, "%s: no interval falls in a phase of %s\n", path.c_str(), truthFile.c_str()), 1;
  const double mib = double(1 << 20) * double(n);
  std::printf("profile: hot_est_mib=%.1f hot_true_mib=%.1f hot_precision=%.3f hot_recall=%.3f intervals=%zu (hot_threshold %.2f)\n",
              est / mib, actual / mib, precision / double(n), recall / double(n), n, cfg->policy.hotThreshold);
  return 0;
}

// The watcher's own memory (its samples, the truth, its libraries: about 9 MiB of node 0 in the
// VM lab, 7% of the 128 MiB hot set) goes to the slowest tier and stays there: the room the
// systems under test compete for is the workload's alone, as the oracle assumes.
void keepOutOfTopTier(const config::TierMap& tiers) {
  if (tiers.tiers.size() < 2) return;
  unsigned long slowest = 0, all = 0;
  const unsigned long maxNode = sizeof(unsigned long) * 8;  // one word of nodes: the VM lab has 4
  for (int node : tiers.tiers.back().nodes)
    if (unsigned(node) < maxNode) slowest |= 1ul << node;
  for (const auto& t : tiers.tiers)
    for (int node : t.nodes)
      if (unsigned(node) < maxNode) all |= 1ul << node;
  if (slowest == 0) return;
  if (::set_mempolicy(MPOL_BIND, &slowest, maxNode) != 0 || ::migrate_pages(0, maxNode, &all, &slowest) < 0)
    std::fprintf(stderr, "# watcher memory stays where it is: %s\n", std::strerror(errno));
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"mtm-placement-watch: where a running mtm-test-hotset's hot and cold memory is, over time"};
  int pid = 0;
  std::string truthFile, json, label = "run", sizeText = "512M", recordFile, configFile;
  double period = 0.5, pingPongWindow = 10;
  app.add_option("--pid", pid, "The workload's pid")->required();
  app.add_option("--truth", truthFile, "Its truth file")->required();
  app.add_option("--size", sizeText, "Its --size");
  app.add_option("--period", period, "Seconds between samples")->check(CLI::Range(0.05, 60.0));
  app.add_option("--json", json, "Write the per-phase table as JSON");
  app.add_option("--label", label, "Name of the system under test, for the title");
  app.add_option("--pingpong-window", pingPongWindow, "Seconds within which a page moving back counts as ping-pong")
      ->check(CLI::Range(0.1, 3600.0));
  app.add_option("--score-record", recordFile,
                 "Score this profile recording's hot bytes against the truth (after the run) instead of watching")
      ->check(CLI::ExistingFile);
  app.add_option("--config", configFile, "mtm's config, for policy.hot_threshold (default: the embedded default)")
      ->check(CLI::ExistingFile);
  CLI11_PARSE(app, argc, argv);
  auto size = parseSize(sizeText);
  if (!size) {
    std::fprintf(stderr, "--size: %s\n", size.error().message().c_str());
    return 2;
  }
  if (!recordFile.empty()) return scoreRecording(recordFile, truthFile, *size, pid, configFile);
  KernelFs fs("/");
  auto readTiers = [&]() -> Result<config::TierMap> {
    auto topo = config::discoverTopology(fs);
    if (!topo) return std::move(topo).takeError();
    return config::buildTierMap(*topo, config::TiersConfig{});
  };
  auto tiers = readTiers();
  if (!tiers) return std::fprintf(stderr, "%s\n", tiers.error().message().c_str()), 1;
  keepOutOfTopTier(*tiers);

  // The top tier's room for the workload: its free memory less the kernel's reserve plus what of
  // the workload is there, both read at one sample, the most any sample saw (a migration in
  // flight holds both copies for a moment). Free memory read when the watch began, seconds before
  // the first phase, with the workload's share a sample after it counted what a system moved in
  // between twice (VM lab, a 600 MiB workload: 180-246 MiB of room where about 135 were).
  const auto& top = tiers->tiers.front();
  const uint64_t reserve = top.kernelReserveBytes;
  const std::vector<int> topNodes = top.nodes;
  uint64_t room = 0;
  bench::HotSetTruth truth;
  truth.granules = *size / bench::kGranule;
  PingPongWatch pingPong(pingPongWindow);
  std::vector<int> tierOf;
  const uint64_t migratedBefore = vmstat("pgmigrate_success");
  std::vector<PhaseResult> phases;
  double weighted[2] = {}, weight = 0;
  std::printf("# %s: t phase since hot_top old_top old_next cold_top, then each class by tier\n", label.c_str());
  while (::kill(pid, 0) == 0) {
    std::this_thread::sleep_for(std::chrono::duration<double>(period));
    truth.update(truthFile);
    if (truth.phases.empty()) continue;
    const double now = bench::monotonicSeconds();
    const size_t phase = truth.phases.size() - 1;
    // Free memory first, then where the pages are: a process that exits between the two frees its
    // share of the top tier, which the other order counted twice (a room of 261 MiB on a 256 MiB
    // node, read as the workload exited). Once its memory is going, the query below fails.
    uint64_t free = 0;
    for (int node : topNodes)
      if (auto bytes = config::readNodeFreeBytes(fs, node)) free += *bytes;
    auto f = measure(pid, truth, phase, *tiers, tierOf);
    if (!f) {
      // An exited process reads as ESRCH, or as EINVAL (no mm) while it waits to be reaped.
      if (::kill(pid, 0) != 0 || f.error().errnum() == ESRCH || f.error().errnum() == EINVAL) break;
      std::fprintf(stderr, "%s\n", f.error().message().c_str());
      return 1;
    }
    pingPong.observe(tierOf, now);
    room = std::max(room, (free > reserve ? free - reserve : 0) + uint64_t(std::count(tierOf.begin(), tierOf.end(), 0)) * kStride * kPage);
    phases.resize(phase + 1);
    auto& p = phases[phase];
    const double since = now - truth.phases[phase].start;
    if (p.reaction < 0 && f->hotTop >= 0.8) p.reaction = since;
    if (p.samples == 0) {
      p.startTop = f->hotTop;
      p.migratedAtStart = vmstat("pgmigrate_success");
    }
    p.end = *f;
    p.samples += 1;
    weighted[0] += f->hotTop;
    weighted[1] += f->coldTop;
    weight += 1;
    std::printf("%8.1f %2zu %6.1f %6.3f %6.3f %6.3f %6.3f  %s\n", now - truth.phases[0].start, phase, since, f->hotTop, f->oldTop,
                f->oldNext, f->coldTop, f->byTier.c_str());
    std::fflush(stdout);
  }
  const uint64_t migratedAfter = vmstat("pgmigrate_success");
  const double migratedMiB = double(migratedAfter - migratedBefore) * kPage / double(1 << 20);
  bench::BenchReport report("placement of mtm-test-hotset under " + label, {{"phase", "", 6, 0},
                                                                            {"reaction", "s", 9, 1},
                                                                            {"start_top", "", 10, 3},
                                                                            {"hot_top", "", 8, 3},
                                                                            {"old_top", "", 8, 3},
                                                                            {"old_next", "", 9, 3},
                                                                            {"old_bottom", "", 11, 3},
                                                                            {"cold_top", "", 9, 3},
                                                                            {"migrated", "MiB", 9, 1}});
  report.note("reaction: seconds from the phase change until 80% of the new hot set is in the top tier (-1: never)");
  report.note("start_top: the fraction of the new hot set in the top tier at the phase's first sample (within one period)");
  report.note("at the phase's last sample: fractions in the top tier of the hot set, of the previous phase's hot set");
  report.note("(old; old_next, old_bottom: in the second and in the slowest tier) and of the rest (cold)");
  report.note("migrated: what the kernel migrated from the phase's first sample to the next phase's (all processes)");
  for (size_t i = 0; i < phases.size(); ++i) {
    const uint64_t until = i + 1 < phases.size() && phases[i + 1].samples > 0 ? phases[i + 1].migratedAtStart : migratedAfter;
    const uint64_t from = phases[i].samples > 0 ? phases[i].migratedAtStart : until;  // a phase the watch never saw: 0
    const double phaseMiB = double(until - std::min(until, from)) * kPage / double(1 << 20);
    report.row({}, {double(i), phases[i].reaction, phases[i].startTop, phases[i].end.hotTop, phases[i].end.oldTop, phases[i].end.oldNext,
                    phases[i].end.oldBottom, phases[i].end.coldTop, phaseMiB});
  }
  const auto oracle = bench::oracleMoves(truth.phases, room / bench::kGranule);
  const double oracleMiB = double(oracle.total() * bench::kGranule) / double(1 << 20);
  const double pingPongMiB = double(pingPong.count() * kStride * kPage) / double(1 << 20);
  report.note(
      fmt::format("oracle: {} MiB up, {} MiB down for these phases, top tier room {} (free less the kernel's reserve, plus the "
                  "workload's share there: the most a sample saw)",
                  oracle.up * 2, oracle.down * 2, formatBytes(room)));
  char line[512];
  std::snprintf(line, sizeof line,
                "summary: hot_top_avg=%.3f cold_top_avg=%.3f migrated_mib=%.1f oracle_mib=%.1f moved_over_oracle=%.2f "
                "pingpong_mib=%.1f samples=%.0f",
                weight ? weighted[0] / weight : 0, weight ? weighted[1] / weight : 0, migratedMiB, oracleMiB,
                oracleMiB > 0 ? migratedMiB / oracleMiB : 0, pingPongMiB, weight);
  report.footer(line);
  if (!json.empty()) report.writeJson(json);
  return 0;
}
