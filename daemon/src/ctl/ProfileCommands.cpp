// mtmctl profile and mtmctl heatmap.
#include <csignal>
#include <cstdio>
#include <fstream>

#include "ctl/Commands.h"
#include "mtm/Json.h"
#include "mtm/Log.h"
#include "mtm/Parse.h"
#include "mtm/daemon/IntervalClock.h"
#include "mtm/daemon/SignalFd.h"
#include "mtm/profiler/Heatmap.h"
#include "mtm/profiler/Profiler.h"
#include "mtm/profiler/Recording.h"

namespace mtm::daemon::ctl {
namespace {

struct ProfileOptions {
  std::vector<int> pids;
  double duration = 10;
  uint32_t intervalMs = 0;
  std::string budget;
  std::vector<std::string> sources;
  std::string record;
  std::string format = "text";
  bool quiet = false;
};

// Bytes of regions at or above the hot threshold.
uint64_t hotBytes(const profiler::Snapshot& s, double threshold) {
  uint64_t n = 0;
  for (const auto& r : s.regions)
    if (r.hotness >= threshold) n += r.end - r.start;
  return n;
}

int runProfile(const Global& global, const ProfileOptions& o) {
  auto loaded = effectiveConfig(global);
  if (!loaded) return fail(loaded.error().message());
  config::Config cfg = *loaded;
  if (o.intervalMs) {
    cfg.profiler.intervalMs = o.intervalMs;
    cfg.profiler.abitWindowMs = std::min(cfg.profiler.abitWindowMs, o.intervalMs / 2);
  }
  if (!o.budget.empty()) {
    auto b = o.budget.back() == '%' ? parsePercent(o.budget) : Result<double>(std::stod(o.budget));
    if (!b || *b <= 0 || *b > 1) return fail("--budget: expected a fraction of one core like 1% or 0.01, got \"" + o.budget + "\"");
    cfg.profiler.budget = *b;
  }
  if (!o.sources.empty()) {
    cfg.profiler.sources = o.sources;
    cfg.profiler.fallbackSources.clear();  // what was asked for, or an error: no stand-in
  }
  auto machine = inspectMachine(KernelFs(global.kernelRoot), cfg);
  if (!machine) return fail(machine.error().message());

  auto signals = SignalFd::open({SIGINT, SIGTERM});
  if (!signals) return fail(signals.error().message());
  auto prof = profiler::Profiler::create(cfg, &machine->tiers);
  if (!prof) return fail(prof.error().message());
  for (int pid : o.pids)
    if (auto st = (*prof)->addTarget(pid); !st.ok()) return fail(st.error().message());
  std::unique_ptr<profiler::Recorder> recorder;
  if (!o.record.empty()) {
    auto r = profiler::Recorder::create(o.record, cfg.profiler.intervalMs, (*prof)->activeSources());
    if (!r) return fail(r.error().message());
    recorder = std::move(*r);
  }
  std::string names;
  for (const auto& n : (*prof)->activeSources()) names += (names.empty() ? "" : ",") + n;
  const bool json = o.format == "json";
  if (!o.quiet && !json)
    std::printf("# profiling %zu process(es) with %s, interval %u ms, budget %.2f%% of one core\n", o.pids.size(), names.c_str(),
                cfg.profiler.intervalMs, cfg.profiler.budget * 100);
  const int intervals = std::max(1, static_cast<int>(o.duration * 1000 / cfg.profiler.intervalMs));
  profiler::Snapshot last;
  IntervalClock clock(std::chrono::milliseconds(cfg.profiler.intervalMs));
  for (int i = 0; i < intervals && (*prof)->targetCount() > 0;) {
    const auto lead = (*prof)->primeLead();
    auto sig = signals->wait(clock.timeoutMs(lead));
    if (sig && *sig != 0) break;
    const auto due = clock.poll(lead, std::chrono::milliseconds(cfg.profiler.intervalMs));
    if (due == IntervalClock::Due::prime) (*prof)->prime();
    if (due != IntervalClock::Due::interval) continue;
    ++i;
    last = (*prof)->runInterval();
    if (recorder)
      if (auto st = recorder->write(last); !st.ok()) return fail(st.error().message());
    const double cpu = double(last.cpuNs) / (cfg.profiler.intervalMs * 1e6);
    if (json && !o.quiet) {  // one object a line per interval
      JsonWriter w;
      w.beginObject().key("interval").value(last.interval).key("seconds").value(last.seconds);
      w.key("regions").value(uint64_t{last.regions.size()}).key("checks").value(last.checks).key("cpu").value(cpu);
      w.key("hot_bytes").value(hotBytes(last, cfg.policy.hotThreshold)).key("exited").value(last.exited).endObject();
      std::fputs(w.str().c_str(), stdout);
    } else if (!o.quiet)
      std::printf("t=%6.1fs regions=%5zu checks=%7llu cpu=%5.2f%% hot=%s%s\n", last.seconds, last.regions.size(),
                  static_cast<unsigned long long>(last.checks), 100.0 * cpu, formatBytes(hotBytes(last, cfg.policy.hotThreshold)).c_str(),
                  last.exited.empty() ? "" : " (a target exited)");
    std::fflush(stdout);
  }
  // The hottest regions at the end.
  auto regions = last.regions;
  std::sort(regions.begin(), regions.end(), [](auto& a, auto& b) { return a.hotness > b.hotness; });
  Table t({{"pid", "pid"},
           {"start", "start"},
           {"end", "end"},
           {"size_bytes", "size[MiB]", 1 << 20},
           {"hotness", "hotness"},
           {"node", "node"},
           {"tier", "tier"},
           {"thp", "thp"}});
  for (size_t i = 0; i < std::min<size_t>(regions.size(), 10); ++i) {
    const auto& r = regions[i];
    char s[24], e[24];
    std::snprintf(s, sizeof s, "%#llx", static_cast<unsigned long long>(r.start));
    std::snprintf(e, sizeof e, "%#llx", static_cast<unsigned long long>(r.end));
    t.addRow({int64_t{r.pid}, std::string(s), std::string(e), r.end - r.start, r.hotness, r.node >= 0 ? Cell(int64_t{r.node}) : Cell(),
              r.tier >= 0 ? Cell(int64_t{r.tier}) : Cell(), std::string(r.huge ? "yes" : "no")});
  }
  if (json && !o.quiet) {  // the last line: {"hottest": [...]}
    JsonWriter w;
    w.beginObject().key("hottest");
    t.writeJson(w);
    std::fputs(w.endObject().str().c_str(), stdout);
    return 0;
  }
  if (!o.quiet) std::printf("\nhottest regions:\n%s", t.renderText().c_str());
  if (!o.record.empty() && !o.quiet)
    std::printf("\nrecorded to %s (mtmctl heatmap %s -o heatmap.svg)\n", o.record.c_str(), o.record.c_str());
  return 0;
}

}  // namespace

void addProfileCommands(CLI::App& parent, const Global& global, Commands& out) {
  auto o = std::make_shared<ProfileOptions>();
  auto* cmd = parent.add_subcommand("profile", "Profile processes' page accesses for a while (an embedded profiler)");
  cmd->add_option("-p,--pid", o->pids, "Process id; repeatable")->required()->check(pidValidator());
  cmd->add_option("-d,--duration", o->duration, "Seconds to profile (default 10)")->check(CLI::Range(0.01, 86400.0));
  cmd->add_option("--interval-ms", o->intervalMs, "Interval (default: profiler.interval_ms)")->check(CLI::Range(10, 3600000));
  cmd->add_option("--budget", o->budget, "CPU budget, a fraction of one core: 1% or 0.01 (default: profiler.budget)");
  cmd->add_option("--source", o->sources, "Source to use; repeatable (default: profiler.sources)")
      ->check(CLI::IsMember({"hw_sample", "ebpf_abit", "page_fault", "damon_vaddr", "none"}));
  cmd->add_option("-f,--format", o->format, "text, or json: an object a line per interval, then {\"hottest\": [...]}")
      ->check(CLI::IsMember({"text", "json"}));
  cmd->add_option("-r,--record", o->record, "Write every interval to FILE (JSON lines) for mtmctl heatmap");
  cmd->add_flag("-q,--quiet", o->quiet, "Print nothing but errors");
  out.push_back({cmd, [&global, o] { return runProfile(global, *o); }});

  struct HeatmapOptions {
    std::string file, output;
    int pid = 0;
    size_t rows = 128;
  };
  auto h = std::make_shared<HeatmapOptions>();
  auto* heat = parent.add_subcommand("heatmap", "Draw a recorded profile: time across, address down, colour = hotness");
  heat->add_option("FILE", h->file, "A recording from mtmctl profile --record")->required()->check(CLI::ExistingFile);
  heat->add_option("-o,--output", h->output, "out.svg or out.png")->required()->check(heatmapFileValidator());
  heat->add_option("-p,--pid", h->pid, "Only this process (default: all)");
  heat->add_option("--rows", h->rows, "Address bins (default 128)")->check(CLI::Range(8, 4096));
  out.push_back({heat, [h] {
                   auto done = writeHeatmap(h->file, h->output, h->pid, h->rows);
                   if (!done) return fail(done.error().message());
                   std::printf("%s\n", done->c_str());
                   return 0;
                 }});
}

CLI::Validator heatmapFileValidator() {
  return CLI::Validator(
      [](std::string& s) {
        return s.size() > 4 && (s.ends_with(".svg") || s.ends_with(".png")) ? std::string()
                                                                            : "expected a name ending in .svg or .png, got \"" + s + "\"";
      },
      "FILE.svg|FILE.png");
}

Result<std::string> writeHeatmap(const std::string& recording, const std::string& output, int pid, size_t rows) {
  const bool png = output.ends_with(".png");
  auto rec = profiler::readRecording(recording);
  if (!rec) return std::move(rec).takeError();
  auto grid = profiler::buildHeatmap(*rec, pid, rows);
  if (grid.rows == 0) return Error(recording + ": no region to draw" + (pid ? " for pid " + std::to_string(pid) : ""));
  const std::string title = "mtm heatmap: " + recording + (pid ? ", pid " + std::to_string(pid) : "");
  if (png) {
    if (auto st = profiler::writePng(grid, title, output); !st.ok()) return st.error();
  } else {
    std::ofstream f(output);
    f << profiler::renderSvg(grid, title);
    if (!f) return Error("cannot write " + output);
  }
  return output + ": " + std::to_string(grid.columns) + " intervals x " + std::to_string(grid.rows) + " address rows (" +
         formatBytes(grid.bytesPerRow) + " each)";
}

}  // namespace mtm::daemon::ctl
