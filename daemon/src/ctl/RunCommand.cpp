// mtmctl run -- CMD ARGS: runs a command with its memory managed from its start. The running
// mtmd manages it when there is one; otherwise a manager embedded in mtmctl (the same code,
// the effective config) does, for as long as the command runs.
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>

#include "ctl/Commands.h"
#include "mtm/Log.h"
#include "mtm/Parse.h"
#include "mtm/UniqueFd.h"
#include "mtm/config/ListenAddress.h"
#include "mtm/daemon/ControlSocket.h"
#include "mtm/daemon/IntervalClock.h"
#include "mtm/daemon/Manager.h"
#include "mtm/daemon/MetricsRender.h"
#include "mtm/daemon/MetricsServer.h"
#include "mtm/daemon/SignalFd.h"
#include "mtm/profiler/Recording.h"

namespace mtm::daemon::ctl {
namespace {

struct RunOptions {
  std::vector<std::string> command;
  std::string policy;
  bool dryRun = false;
  bool embedded = false;  // do not look for mtmd
  std::string record;
  std::string heatmap;
  std::string metrics;  // a listener for Prometheus (config::ListenAddress); empty: none
  bool quiet = false;
};

// The exit status a shell would report for the child.
int exitCode(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

// What mtmctl reads from its signalfd: SIGCHLD, and every signal another process may send it
// that it passes on to the command. Left to their defaults: SIGKILL and SIGSTOP (they cannot
// be caught), the job-control stops (Ctrl-Z must stop mtmctl too, or the shell never gets the
// terminal back), the faults and resource-limit signals that concern mtmctl itself.
std::vector<int> supervisedSignals() {
  std::vector<int> s{SIGCHLD, SIGHUP,  SIGINT, SIGQUIT,  SIGUSR1,   SIGUSR2, SIGPIPE, SIGALRM,
                     SIGTERM, SIGCONT, SIGURG, SIGWINCH, SIGVTALRM, SIGPROF, SIGIO,   SIGPWR};
  for (int rt = SIGRTMIN; rt <= SIGRTMAX; ++rt) s.push_back(rt);
  return s;
}

// Starts the command with every signal unblocked; returns its pid once exec succeeded. The
// exec's outcome comes back over a close-on-exec pipe: EOF means it ran. The command gets
// SIGKILL if mtmctl dies (PR_SET_PDEATHSIG): killed with SIGKILL, mtmctl cannot pass that on,
// and a command left running would run unmanaged and unnoticed.
Result<pid_t> launch(const std::vector<std::string>& command) {
  int pipefd[2];
  if (::pipe2(pipefd, O_CLOEXEC) != 0) return Error::fromErrno("pipe", errno);
  UniqueFd readEnd(pipefd[0]), writeEnd(pipefd[1]);
  std::vector<char*> argv;
  for (const auto& a : command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) return Error::fromErrno("fork", errno);
  if (pid == 0) {
    readEnd.reset();
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != parent) ::_exit(127);  // mtmctl already gone
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::execvp(argv[0], argv.data());
    int err = errno;
    (void)!::write(writeEnd.get(), &err, sizeof err);
    ::_exit(127);
  }
  writeEnd.reset();
  int err = 0;
  ssize_t n;
  do n = ::read(readEnd.get(), &err, sizeof err);
  while (n < 0 && errno == EINTR);
  if (n == static_cast<ssize_t>(sizeof err)) {
    ::waitpid(pid, nullptr, 0);
    return Error("cannot run \"" + command[0] + "\": " + std::strerror(err), err);
  }
  return pid;
}

int launchFailure(const Error& e) {
  fail(e.message());
  return e.errnum() == ENOENT ? 127 : 126;
}

// An embedded manager's intervals, for supervise().
struct Ticks {
  std::chrono::milliseconds interval{0};  // 0: none
  std::function<Status()> onTick;
  Manager* manager = nullptr;  // primed before each tick (Manager::primeLead)
};

// Waits for the command like a shell would, running the manager's intervals. A signal another
// process sends mtmctl is passed on; the terminal's (sent by the kernel) already reached the
// command, which shares mtmctl's process group, so it is not sent twice; nor is one mtmctl
// raised itself (SIGPIPE on a closed stderr: the write fails instead).
Result<int> supervise(pid_t pid, SignalFd& signals, const Ticks& ticks) {
  const auto interval = ticks.interval;
  IntervalClock clock(interval);
  auto lead = [&] { return ticks.manager ? ticks.manager->primeLead() : std::chrono::milliseconds(0); };
  for (;;) {
    const int timeout = interval.count() > 0 ? clock.timeoutMs(lead()) : -1;
    pid_t sender = 0;
    auto sig = signals.wait(timeout, &sender);
    if (!sig) return std::move(sig).takeError();
    if (*sig == SIGCHLD) {
      int status = 0;
      if (::waitpid(pid, &status, WNOHANG) == pid) return exitCode(status);
      continue;
    }
    if (*sig != 0) {
      if (sender != 0 && sender != ::getpid()) ::kill(pid, *sig);  // the command decides whether to stop
      continue;
    }
    if (interval.count() == 0) continue;
    const auto due = clock.poll(lead(), interval);
    if (due == IntervalClock::Due::prime) ticks.manager->primeProfiler();
    if (due != IntervalClock::Due::interval) continue;
    if (auto st = ticks.onTick(); !st.ok()) return std::move(st).takeError();
  }
}

// When the command could not be managed: one still running is stopped, since it would run
// unmanaged, and mtmctl fails with `why`; one that finished first (a short one, or mtmd busy) ran
// as asked, and its exit status is the answer. SIGKILL tells them apart: it does not change the
// status of a process already exiting -- one whose address space is gone, which is why the
// attach failed, though it may not be a zombie yet that waitpid(WNOHANG) would see.
int unmanaged(pid_t pid, const std::string& why, bool quiet) {
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
    return fail("could not manage pid " + std::to_string(pid) + " (stopped it): " + why);
  if (!quiet) std::fprintf(stderr, "mtm: pid %d finished before it could be managed (%s)\n", pid, why.c_str());
  return exitCode(status);
}

// mtmd manages it: register, then wait.
int runUnderDaemon(const std::string& socket, const RunOptions& o) {
  auto signals = SignalFd::open(supervisedSignals());
  if (!signals) return fail(signals.error().message());
  auto pid = launch(o.command);
  if (!pid) return launchFailure(pid.error());
  auto reply = controlRequest(socket, "attach " + std::to_string(*pid));
  if (!reply) return unmanaged(*pid, "mtmd: " + reply.error().message(), o.quiet);
  if (!o.quiet) std::fprintf(stderr, "mtm: pid %d managed by mtmd (%s); mtmctl status shows it\n", *pid, socket.c_str());
  auto code = supervise(*pid, *signals, Ticks{});
  if (!code) return fail(code.error().message());
  return *code;
}

std::string summary(const TargetStats& t) {
  const double mib = double(kPageSize) / double(1 << 20);
  const std::string why = describeFailures(t.failedByErrno);
  return fmt::format("promoted {:.1f} MiB, demoted {:.1f} MiB, {} pages failed{}", double(t.promotedPages) * mib,
                     double(t.demotedPages) * mib, t.failedPages, why.empty() ? "" : " (" + why + ")");
}

// No mtmd: this process manages the command until it exits.
int runEmbedded(config::Config cfg, const Global& global, const RunOptions& o) {
  config::ListenAddress listen;
  if (!o.metrics.empty()) {
    auto at = config::parseListenAddress(o.metrics);
    if (!at) return fail("--metrics " + o.metrics + ": " + at.error().message());
    listen = *at;
  }
  if (!o.policy.empty()) cfg.policy.name = o.policy;
  if (o.dryRun) cfg.migration.dryRun = true;
  auto machine = inspectMachine(KernelFs(global.kernelRoot), cfg);
  if (!machine) return fail(machine.error().message());
  auto signals = SignalFd::open(supervisedSignals());
  if (!signals) return fail(signals.error().message());
  auto manager = Manager::create(cfg, std::move(*machine));
  if (!manager) return fail(manager.error().message());
  auto& m = **manager;
  m.setMovesInline(true);  // no socket to keep answering: each interval's line counts its moves
  std::unique_ptr<profiler::Recorder> recorder;
  const std::string recordPath = !o.record.empty() ? o.record : !o.heatmap.empty() ? o.heatmap + ".jsonl" : "";
  if (!recordPath.empty()) {
    auto r = profiler::Recorder::create(recordPath, cfg.profiler.intervalMs, m.profiler().activeSources());
    if (!r) return fail(r.error().message());
    recorder = std::move(*r);
  }
  std::unique_ptr<MetricsServer> metrics;
  MetricsRecorder metricsRecorder;
  if (listen.kind != config::ListenAddress::Kind::off) {
    auto server = MetricsServer::start(listen, "--metrics");
    if (!server) return fail(server.error().message());
    metrics = std::move(*server);
    if (!o.quiet) std::fprintf(stderr, "mtm: metrics at %s\n", metrics->url().c_str());
  }
  auto pid = launch(o.command);
  if (!pid) return launchFailure(pid.error());
  if (auto st = m.attach(*pid, "mtmctl run"); !st.ok()) return unmanaged(*pid, st.error().message(), o.quiet);
  if (!o.quiet)
    std::fprintf(stderr, "mtm: no mtmd running; managing pid %d here (policy %s%s, %zu tiers, interval %u ms)\n", *pid,
                 cfg.policy.name.c_str(), cfg.migration.dryRun ? ", dry run" : "", m.machine().tiers.tiers.size(), cfg.profiler.intervalMs);

  TargetStats last;
  double cpuSum = 0, cpuPeak = 0;
  uint64_t intervals = 0;
  Ticks ticks;
  ticks.interval = std::chrono::milliseconds(cfg.profiler.intervalMs);
  ticks.manager = &m;
  const KernelFs fs(global.kernelRoot);
  if (metrics) metrics->publish(metricsRecorder.capture(m, fs));
  ticks.onTick = [&]() -> Status {
    const auto start = std::chrono::steady_clock::now();
    const auto report = m.runInterval();
    if (metrics) {
      metricsRecorder.observeInterval(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), report);
      metrics->publish(metricsRecorder.capture(m, fs));
    }
    cpuSum += report.profilerCpu;
    cpuPeak = std::max(cpuPeak, report.profilerCpu);
    ++intervals;
    if (recorder)
      if (auto st = recorder->write(m.lastSnapshot(), {report.promotedPages, report.demotedPages,
                                                       intervals == 1 ? std::vector<std::string>{"managing pid " + std::to_string(*pid)}
                                                                      : std::vector<std::string>{}});
          !st.ok())
        return st;
    if (auto it = m.targets().find(*pid); it != m.targets().end()) last = it->second;
    if (!o.quiet)
      std::fprintf(stderr, "mtm: %s | moved up %.1f MiB, down %.1f MiB | profiler %.2f%%\n", m.residencyLine().c_str(),
                   double(report.promotedPages) * kPageSize / double(1 << 20), double(report.demotedPages) * kPageSize / double(1 << 20),
                   report.profilerCpu * 100);
    return {};
  };
  auto code = supervise(*pid, *signals, ticks);
  if (!code) return fail(code.error().message());
  recorder.reset();
  if (!o.quiet) {
    std::fprintf(stderr, "mtm: pid %d exited (status %d); %s\n", *pid, *code, summary(last).c_str());
    if (intervals > 0)
      std::fprintf(stderr, "mtm: profiler %.2f%% of a core on average over %llu intervals (budget %.2f%%), peak %.2f%%\n",
                   cpuSum / double(intervals) * 100, static_cast<unsigned long long>(intervals), cfg.profiler.budget * 100, cpuPeak * 100);
    if (cfg.policy.predict.mode == "on") std::fprintf(stderr, "mtm: prediction: %s\n", describePrediction(m.prediction()).c_str());
  }
  if (!o.heatmap.empty()) {
    auto drawn = writeHeatmap(recordPath, o.heatmap, *pid, 128);
    if (!drawn)
      fail(drawn.error().message());
    else if (!o.quiet)
      std::fprintf(stderr, "mtm: heatmap %s\n", drawn->c_str());
  }
  return *code;
}

int runCommand(const Global& global, const RunOptions& o) {
  if (global.verbosity == 0) {  // -v wins over -q and --dry-run: the logs asked for
    if (o.quiet)
      log::get().set_level(spdlog::level::err);
    else if (o.dryRun)
      log::get().set_level(spdlog::level::info);  // the plan is logged at info: show it
  }
  auto cfg = effectiveConfig(global);
  if (!cfg) return fail(cfg.error().message());
  const bool wantsEmbedded = o.embedded || !o.policy.empty() || o.dryRun || !o.record.empty() || !o.heatmap.empty() || !o.metrics.empty();
  if (!wantsEmbedded) {
    auto pong = controlRequest(cfg->daemon.socket, "ping", std::chrono::seconds(2));
    if (pong) return runUnderDaemon(cfg->daemon.socket, o);
    const int err = pong.error().errnum();
    if (err != ENOENT && err != ECONNREFUSED) return fail(pong.error().message());
  }
  return runEmbedded(*cfg, global, o);
}

}  // namespace

void addRunCommand(CLI::App& parent, const Global& global, Commands& out) {
  auto o = std::make_shared<RunOptions>();
  auto* cmd = parent.add_subcommand("run", "Run a command with its memory managed from the start (by mtmd, or embedded)");
  cmd->add_option("COMMAND", o->command, "The command and its arguments, after --")->required();
  cmd->add_option("--policy", o->policy, "Policy for an embedded manager: mtm, two_tier or none (implies --embedded)")
      ->check(CLI::IsMember({"mtm", "two_tier", "none"}));
  cmd->add_flag("--dry-run", o->dryRun, "Log what would move, move nothing (implies --embedded)");
  cmd->add_flag("--embedded", o->embedded, "Manage it here even when mtmd runs");
  cmd->add_option("-r,--record", o->record, "Record every interval to FILE (implies --embedded)");
  cmd->add_option("--heatmap", o->heatmap, "Draw the run as out.svg or out.png at the end (implies --embedded)")
      ->check(heatmapFileValidator());
  cmd->add_option("--metrics", o->metrics,
                  "Serve Prometheus metrics of the run at ADDR: HOST:PORT, [IPV6]:PORT or a Unix socket path (implies --embedded)");
  cmd->add_flag("-q,--quiet", o->quiet, "Print nothing but errors (the command's own output is untouched)");
  cmd->footer(
      "The exit status is the command's (128+N when a signal N ended it; 127: not found).\n"
      "Signals sent to mtmctl are passed on to the command; if mtmctl is killed, so is the command.\n"
      "Examples:\n"
      "  mtmctl run -- ./my-workload --size 8G\n"
      "  mtmctl run --policy two_tier --heatmap run.svg -- ./my-workload");
  out.push_back({cmd, [&global, o] { return runCommand(global, *o); }});
}

}  // namespace mtm::daemon::ctl
