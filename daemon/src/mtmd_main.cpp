// mtmd: the mtm daemon. Loads its config, discovers the memory tiers, and every interval runs
// profiler -> policy -> mover over the processes it manages (from the config and from the
// control socket). SIGHUP reloads (keeping the old config if the new one is invalid or does not
// fit), SIGTERM and SIGINT stop it. systemd: Type=notify with a watchdog.

#include <poll.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <optional>

#include "mtm/Json.h"
#include "mtm/KernelFs.h"
#include "mtm/Log.h"
#include "mtm/config/ConfigLoader.h"
#include "mtm/config/ListenAddress.h"
#include "mtm/daemon/Cli.h"
#include "mtm/daemon/ControlRequest.h"
#include "mtm/daemon/ControlSocket.h"
#include "mtm/daemon/CxlPool.h"
#include "mtm/daemon/IntervalClock.h"
#include "mtm/daemon/Machine.h"
#include "mtm/daemon/Manager.h"
#include "mtm/daemon/MetricsRender.h"
#include "mtm/daemon/MetricsServer.h"
#include "mtm/daemon/Plugins.h"
#include "mtm/daemon/Requests.h"
#include "mtm/daemon/Service.h"
#include "mtm/daemon/SignalFd.h"

namespace {

using namespace mtm;

struct Options {
  std::string configPath;
  std::string checkConfig;
  bool listPlugins = false;
  std::string logLevel;
  std::string kernelRoot = "/";
};

void applyLogLevel(const Options& opts, const config::Config& cfg) {
  spdlog::level::level_enum level = spdlog::level::info;
  log::parseLevel(opts.logLevel.empty() ? cfg.daemon.logLevel : opts.logLevel, level);
  log::get().set_level(level);
}

// Loads config and tiers; on failure logs why and keeps whatever the caller had.
std::optional<daemon::Machine> load(const Options& opts, const KernelFs& fs, config::Config& cfg) {
  auto loaded = config::loadConfigOrDefault(opts.configPath);
  if (!loaded) {
    MTM_ERROR("config error:\n{}", loaded.error().message());
    return std::nullopt;
  }
  auto machine = daemon::inspectMachine(fs, *loaded);
  if (!machine) {
    MTM_ERROR("config {} does not fit this machine: {}", loaded->source, machine.error().message());
    return std::nullopt;
  }
  cfg = std::move(*loaded);
  return std::move(machine).value();
}

using Clock = std::chrono::steady_clock;

// The CXL pool mtmd hands out (daemon.cxl_pool); one that cannot be opened is logged and mtmd
// runs on without one, answering pool requests with the reason.
std::unique_ptr<daemon::CxlPoolService> openCxlPool(const std::string& spec) {
  auto service = daemon::CxlPoolService::open(spec);
  if (service) return std::move(service).value();
  MTM_ERROR("{}: running without a CXL pool", service.error().message());
  return daemon::CxlPoolService::open("").value();
}

// The metrics listener (daemon.metrics, already validated); one that cannot listen (an address
// in use) is logged and mtmd runs on without metrics.
std::unique_ptr<daemon::MetricsServer> openMetrics(const std::string& spec) {
  auto at = config::parseListenAddress(spec);
  if (!at || at->kind == config::ListenAddress::Kind::off) return nullptr;
  auto server = daemon::MetricsServer::start(*at, "daemon.metrics");
  if (!server) {
    MTM_ERROR("metrics: {}: running without metrics (set daemon.metrics to a free address, or off)", server.error().message());
    return nullptr;
  }
  MTM_INFO("metrics at {}", (*server)->url());
  return std::move(server).value();
}

std::string statusLine(const daemon::Manager& m, const daemon::IntervalReport& r) {
  return fmt::format("STATUS={} target(s), interval {}, promoted {} demoted {} pages, profiler {:.2f}% of a core", r.targets, r.interval,
                     r.promotedPages, r.demotedPages, r.profilerCpu * 100) +
         (m.config().migration.dryRun ? " (dry run)" : "");
}

// The event loop: signals, control-socket clients, managed processes' exits and the interval
// timer on one thread; pages move on the manager's move worker, whose end the loop polls for.
int runDaemon(const Options& opts) {
  KernelFs fs(opts.kernelRoot);
  config::Config cfg;
  auto machine = load(opts, fs, cfg);
  if (!machine) return 1;
  applyLogLevel(opts, cfg);
  auto signals = daemon::SignalFd::open({SIGTERM, SIGINT, SIGHUP});
  if (!signals) {
    MTM_ERROR("{}", signals.error().message());
    return 1;
  }
  auto lock = daemon::InstanceLock::acquire(cfg.daemon.lockFile);
  if (!lock) {
    MTM_ERROR("{}", lock.error().message());
    return 1;
  }
  MTM_INFO("start config={} tiers={}", cfg.source, machine->tiers.tiers.size());
  daemon::logMachine(*machine);
  auto manager = daemon::Manager::create(cfg, std::move(*machine));
  if (!manager) {
    MTM_ERROR("{}", manager.error().message());
    return 1;
  }
  auto& m = **manager;
  auto cxlPool = openCxlPool(cfg.daemon.cxlPool);
  auto server = daemon::ControlServer::open(
      cfg.daemon.socket, [&m, &cxlPool](const std::string& request, const daemon::Peer& peer, std::vector<int>* passFds) {
        // Escaped: a request is anyone's bytes, and the log is read on terminals.
        MTM_DEBUG("request uid={} pid={} {}", peer.uid, peer.pid, jsonEscape(request.substr(0, 200)));
        auto parsed = daemon::parseControlRequest(request);
        if (!parsed) return daemon::Reply(std::move(parsed).takeError());
        if (parsed->cxl()) return cxlPool->handle(*parsed, peer, passFds);
        return daemon::handleRequest(m, *parsed, peer);
      });
  if (!server) {
    MTM_ERROR("control socket: {}", server.error().message());
    return 1;
  }
  auto metrics = openMetrics(cfg.daemon.metrics);
  daemon::MetricsRecorder recorder;
  auto publishMetrics = [&] {
    if (metrics) metrics->publish(recorder.capture(m, fs));
  };
  m.attachConfigTargets();
  publishMetrics();
  const auto watchdog = daemon::watchdogPeriod();
  daemon::notifySystemd("READY=1\nSTATUS=managing " + std::to_string(m.lastSnapshot().regions.size()) + " regions");
  MTM_INFO("ready socket={} watchdog={}", server->path(), watchdog ? std::to_string(watchdog->count()) + "ms" : "off");

  auto interval = [&] { return std::chrono::milliseconds(m.config().profiler.intervalMs); };
  daemon::IntervalClock ticks(interval());
  auto nextPing = Clock::now();
  for (;;) {
    const auto now = Clock::now();
    auto wake = std::min(ticks.wake(m.primeLead()), now + std::chrono::seconds(1));
    if (watchdog) wake = std::min(wake, nextPing);
    // [signals, moves done, socket and its clients..., managed processes' exits...]
    std::vector<pollfd> fds{{signals->fd(), POLLIN, 0}, {m.movesDoneFd(), POLLIN, 0}};
    auto serverFds = server->pollFds();
    fds.insert(fds.end(), serverFds.begin(), serverFds.end());
    auto exitFds = m.exitPollFds();
    fds.insert(fds.end(), exitFds.begin(), exitFds.end());
    const int timeout = static_cast<int>(std::max<int64_t>(0, std::chrono::ceil<std::chrono::milliseconds>(wake - now).count()));
    if (::poll(fds.data(), fds.size(), timeout) < 0 && errno != EINTR) {
      MTM_ERROR("poll: {}", std::strerror(errno));
      return 1;
    }
    if (fds[0].revents) {
      auto sig = signals->wait(0);
      if (!sig) {
        MTM_ERROR("{}", sig.error().message());
        return 1;
      }
      if (*sig == SIGTERM || *sig == SIGINT) {
        MTM_INFO("stop signal={}", *sig == SIGTERM ? "SIGTERM" : "SIGINT");
        daemon::notifySystemd("STOPPING=1");
        return 0;
      }
      if (*sig == SIGHUP) {
        daemon::notifySystemd("RELOADING=1");
        MTM_INFO("reload config={}", opts.configPath.empty() ? cfg.source : opts.configPath);
        config::Config next;
        if (auto reloaded = load(opts, fs, next)) {
          daemon::logMachine(*reloaded);
          if (auto st = m.reconfigure(next, std::move(*reloaded)); !st.ok()) {
            MTM_WARN("reload failed: keeping the previous config ({}): {}", cfg.source, st.error().message());
          } else {
            if (next.daemon.socket != cfg.daemon.socket || next.daemon.lockFile != cfg.daemon.lockFile)
              MTM_WARN("daemon.socket and daemon.lock_file changes take effect at the next start");
            if (next.daemon.cxlPool != cxlPool->spec()) cxlPool = openCxlPool(next.daemon.cxlPool);
            if (next.daemon.metrics != cfg.daemon.metrics) {
              metrics.reset();  // the old listener goes first: the new one may want its address
              metrics = openMetrics(next.daemon.metrics);
            }
            cfg = std::move(next);
            applyLogLevel(opts, cfg);
            MTM_INFO("reloaded config={}", cfg.source);
          }
        } else {
          MTM_WARN("reload failed: keeping the previous config ({})", cfg.source);
        }
        daemon::notifySystemd("READY=1");
      }
    }
    if (fds[1].revents) {
      m.onMovesDone();
      publishMetrics();
    }
    // Exits first: a status request answered in this pass must not list a process that is gone.
    m.onExits({fds.end() - static_cast<std::ptrdiff_t>(exitFds.size()), fds.end()});
    server->onReady({fds.begin() + 2, fds.end() - static_cast<std::ptrdiff_t>(exitFds.size())});
    server->expireClients();
    switch (ticks.poll(m.primeLead(), interval())) {
      case daemon::IntervalClock::Due::prime:
        m.primeProfiler();
        break;
      case daemon::IntervalClock::Due::interval: {
        m.attachConfigTargets();
        const auto start = Clock::now();
        const auto report = m.runInterval();
        recorder.observeInterval(std::chrono::duration<double>(Clock::now() - start).count(), report);
        publishMetrics();
        daemon::notifySystemd(statusLine(m, report));
        break;
      }
      case daemon::IntervalClock::Due::nothing:
        break;
    }
    if (watchdog && Clock::now() >= nextPing) {
      daemon::notifySystemd("WATCHDOG=1");
      nextPing = Clock::now() + *watchdog;
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "mtmd: the mtm tiered-memory daemon.\n"
      "Discovers the memory tiers, profiles the processes it manages and moves their\n"
      "pages between tiers. Runs in the foreground (systemd: mtmd.service).",
      "mtmd"};
  app.footer(
      "Examples:\n"
      "  mtmd                              run with the embedded default config\n"
      "  mtmd --config /etc/mtm/mtm.yaml   run with a config file (SIGHUP reloads it)\n"
      "  mtmd --check-config mtm.yaml      validate a config file and exit\n"
      "  mtmd --list-plugins               list profiler sources, policies and movers");
  Options opts;
  app.add_option("-c,--config", opts.configPath, "YAML config file (default: the embedded default)")->check(CLI::ExistingFile);
  app.add_option("--check-config", opts.checkConfig, "Validate FILE, print the result and exit")->type_name("FILE");
  app.add_flag("--list-plugins", opts.listPlugins, "List the registered plugins and exit");
  app.add_option("--log-level", opts.logLevel, "trace|debug|info|warn|error|off (overrides daemon.log_level)")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}));
  app.add_option("--kernel-root", opts.kernelRoot, "Read /sys and /proc under DIR (captured trees)")
      ->check(CLI::ExistingDirectory)
      ->group("");
  app.set_version_flag("--version", "mtmd " MTM_VERSION);
  if (int rc = mtm::daemon::parseCommandLine(app, argc, argv); rc >= 0) return rc;

  mtm::log::setup("mtmd");
  if (opts.listPlugins) {
    std::fputs(mtm::daemon::listPlugins().c_str(), stdout);
    return 0;
  }
  if (!opts.checkConfig.empty()) {
    auto machine = mtm::daemon::checkConfigFile(opts.checkConfig, mtm::KernelFs(opts.kernelRoot));
    if (!machine) {
      std::fprintf(stderr, "%s\n", machine.error().message().c_str());
      return 1;
    }
    std::printf("%s\n", mtm::daemon::describeCheckedConfig(opts.checkConfig, *machine).c_str());
    return 0;
  }
  return runDaemon(opts);
}
