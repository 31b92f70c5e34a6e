// mtmctl migrate: move a process's pages to a node or tier.
#include <unistd.h>

#include <chrono>
#include <cstdio>

#include "ctl/Commands.h"
#include "ctl/Migration.h"
#include "mtm/KernelFs.h"
#include "mtm/Parse.h"
#include "mtm/ProcMaps.h"
#include "mtm/daemon/Destination.h"
#include "mtm/daemon/MigrationReport.h"
#include "mtm/daemon/Process.h"
#include "mtm/migrate/MovePagesMover.h"

namespace mtm::daemon::ctl {
namespace {

struct Options {
  int pid = 0;
  std::vector<std::string> ranges;
  bool all = false;
  std::string to;
  std::string rate;
  uint32_t threads = 0;
  uint32_t batch = 0;
  bool dryRun = false;
  bool splitThp = false;
  bool fallback = false;
  std::string format = "text";
};

// One progress line on stderr for moves that last: rewritten in place on a terminal (5 a
// second), a fresh line every 5 s otherwise. Silent for moves shorter than a second.
class ProgressLine {
 public:
  ProgressLine() : tty_(isatty(STDERR_FILENO) == 1) {}
  ~ProgressLine() {
    if (shown_ && tty_) std::fputc('\n', stderr);
  }
  void operator()(const migrate::Progress& p) {
    using namespace std::chrono;
    if (p.elapsed < seconds(1)) return;
    const auto now = steady_clock::now();
    if (now < next_) return;
    next_ = now + (tty_ ? milliseconds(200) : seconds(5));
    const double s = duration<double>(p.elapsed).count();
    std::fprintf(stderr, "%smigrate: %s of %s (%.0f%%), %s/s%s", tty_ ? "\r" : "", formatBytes(p.pagesDone * kPageSize).c_str(),
                 formatBytes(p.pagesTotal * kPageSize).c_str(),
                 p.pagesTotal ? 100.0 * static_cast<double>(p.pagesDone) / static_cast<double>(p.pagesTotal) : 100.0,
                 formatBytes(static_cast<uint64_t>(static_cast<double>(p.pagesMoved * kPageSize) / s)).c_str(), tty_ ? "   " : "\n");
    shown_ = true;
  }

 private:
  bool tty_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point next_{};
};

int run(const Global& global, const Options& o) {
  config::Config cfg;
  auto machine = effectiveMachine(global, cfg);
  if (!machine) return fail(machine.error().message());
  auto dest = resolveDestination(o.to, machine->tiers, machine->topology, o.fallback);
  if (!dest) return fail("--to: " + dest.error().message());
  auto ranges = parseRanges(o.ranges);
  if (!ranges) return fail(ranges.error().message());
  auto id = readProcessIdentity(KernelFs("/"), o.pid);
  if (!id) return fail(id.error().message());
  if (auto st = checkManageable(*id); !st.ok()) return fail(st.error().message());

  migrate::MoverOptions options = migrate::MoverOptions::fromConfig(cfg.migration);
  options.maxPages = 0;  // the per-interval budget is the daemon's; a manual move goes to the end
  if (!o.rate.empty()) {
    auto rate = parseRate(o.rate);
    if (!rate) return fail("--rate: " + rate.error().message());
    options.maxRateBytes = *rate;
  }
  if (o.threads) options.threads = o.threads;
  if (o.batch) options.batchPages = o.batch;
  options.dryRun = options.dryRun || o.dryRun;

  MoveRequest req;
  req.pid = o.pid;
  req.ranges = *ranges;  // empty with --all: every VMA
  req.toNode = dest->node;
  req.fallbackNodes = dest->fallbackNodes;
  req.splitPartialThps = o.splitThp;

  LiveKernel kernel;
  migrate::MovePagesMover mover({kernel.deps(), options});
  ProgressLine progress;
  auto stats = mover.execute({req}, std::ref(progress));
  const Format format = parseFormat(o.format).value();
  if (stats.pagesRequested == 0 && !stats.errors.empty() && format == Format::Text) {
    for (const auto& e : stats.errors) std::fprintf(stderr, "mtmctl: %s\n", e.c_str());
    return 1;
  }
  if (format == Format::Text) {
    std::printf("%s pid %d to node %d%s%s:\n", options.dryRun ? "dry run: would migrate" : "migrated", o.pid, dest->node,
                dest->fallbackNodes.empty() ? "" : " (fallback nodes ",
                dest->fallbackNodes.empty() ? "" : (formatNodeList(dest->fallbackNodes) + ")").c_str());
    if (options.dryRun)
      std::printf("  would move %s, already there %s\n", formatBytes(stats.pagesWouldMove * kPageSize).c_str(),
                  formatBytes(stats.pagesAlreadyThere * kPageSize).c_str());
  }
  std::fputs(renderMoveStats(stats, format).c_str(), stdout);
  for (const auto& e : stats.errors) std::fprintf(stderr, "mtmctl: %s\n", e.c_str());
  return stats.errors.empty() ? 0 : 1;
}

}  // namespace

Result<std::vector<AddressRange>> parseRanges(const std::vector<std::string>& texts) {
  std::vector<AddressRange> out;
  for (const auto& t : texts) {
    auto r = parseAddressRange(t);
    if (!r) return Error("--range: " + r.error().message());
    out.push_back({r->first, r->second});
  }
  return out;
}

CLI::Validator addressRangeValidator() {
  return CLI::Validator(
      [](std::string& s) {
        auto r = parseAddressRange(s);
        return r ? std::string() : r.error().message();
      },
      "START-END");
}

CLI::Validator rateValidator() {
  return CLI::Validator(
      [](std::string& s) {
        auto r = parseRate(s);
        return r ? std::string() : r.error().message();
      },
      "RATE");
}

void addMigrateCommand(CLI::App& parent, const Global& global, Commands& out) {
  auto o = std::make_shared<Options>();
  auto* cmd = parent.add_subcommand("migrate", "Move a process's pages to a node or tier (move_pages(2))");
  cmd->footer(
      "Huge pages move whole; with --split-thp a THP the ranges cover only partly is split first.\n"
      "Exit status: 0 when the request ran (per-page outcomes are in the summary), 1 when it\n"
      "could not (no such process, permission denied, nothing mapped), 2 for bad arguments.");
  cmd->add_option("-p,--pid", o->pid, "Process id")->required()->check(pidValidator());
  auto* range = cmd->add_option("-r,--range", o->ranges, "Address range START-END (hex); repeatable")->check(addressRangeValidator());
  auto* all = cmd->add_flag("-a,--all", o->all, "Every mapping of the process");
  range->excludes(all);
  all->excludes(range);
  cmd->add_option("-t,--to", o->to, "Destination: NODE, tier:N or tier:NAME")->required();
  cmd->add_option("--rate", o->rate, "Bandwidth budget, e.g. 512MiB/s (default: migration.max_rate)")->check(rateValidator());
  cmd->add_option("--threads", o->threads, "Worker threads (default: migration.threads)")->check(CLI::Range(1, 64));
  cmd->add_option("--batch", o->batch, "Addresses per move_pages call (default: migration.batch_pages)")->check(CLI::Range(1, 1 << 20));
  cmd->add_flag("--split-thp", o->splitThp, "Split THPs the ranges cover only partly; move only covered pages");
  cmd->add_flag("--fallback", o->fallback, "When the destination is full, use the next tier below with room");
  cmd->add_flag("-n,--dry-run", o->dryRun, "Report what would move; move nothing");
  cmd->add_option("-f,--format", o->format, "text|json|csv")->check(CLI::IsMember({"text", "json", "csv"}));
  out.push_back({cmd, [&global, o] {
                   if (o->ranges.empty() && !o->all) {
                     std::fprintf(stderr, "mtmctl: migrate needs --range or --all (see mtmctl migrate --help)\n");
                     return 2;
                   }
                   return run(global, *o);
                 }});
}

}  // namespace mtm::daemon::ctl
