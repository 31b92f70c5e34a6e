// mtmd at scale: a real mtmd managing 1, 50 and 200 processes, and per count its CPU, its RSS
// against the target (32 MiB + 0.1% of the managed memory), and the
// round trip of `status json` on its socket -- p50 and p99, and p99 while pages were moving
// (status says moves_in_flight). The peer is mtmd itself: CPU per target at the largest count
// against the second largest (flat means the cost of a target does not grow with their number),
// and the socket's p99 during moves against its p99 while idle. Also the cost of mtmd's BPF hooks
// (the accessed-bit program's mmap_lock and exit tracepoints, one copy for all targets): calls
// a second on the whole machine, ns a call and % of a core, from the kernel's run-time stats
// (BPF_ENABLE_STATS, held for the run), ns a call at the largest count against the second.
//   mtm-bench-daemon [--targets 1,50,200] [--seconds 10] [--size 16M] [--start-node N]
//                    [--json FILE]
// Each process is a mostly idle service (it writes all of --size once, then one page in 64
// every 100 ms): two cores cannot run 200 busy workloads and measure mtmd too. With
// --start-node (the VM lab, tools/bench-daemon --vm) each is an mtm-test-hotset whose memory
// starts on that node, and mtmd moves its hot set up while the socket is measured.
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "BenchReport.h"
#include "mtm/KernelFs.h"
#include "mtm/Parse.h"
#include "mtm/UniqueFd.h"
#include "mtm/daemon/ControlSocket.h"
#include "mtm/profiler/AbitScanner.h"
#include "mtm/profiler/LoadedBpfPrograms.h"

using namespace mtm;
using Clock = std::chrono::steady_clock;

namespace {

pid_t spawn(const std::vector<std::string>& argv, const std::string& logPath) {
  pid_t pid = ::fork();
  if (pid == 0) {
    std::FILE* log = std::fopen(logPath.c_str(), "w");
    if (log) ::dup2(fileno(log), 2);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  return pid;
}

// A mostly idle service: all of `bytes` written once, then one page in 64 every 100 ms. Ends
// with the bench (PR_SET_PDEATHSIG).
pid_t spawnService(uint64_t bytes, const std::string& readyPath) {
  pid_t pid = ::fork();
  if (pid != 0) return pid;
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  auto* mem = static_cast<volatile char*>(::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  if (mem == MAP_FAILED) ::_exit(1);
  for (uint64_t a = 0; a < bytes; a += 4096) mem[a] = 1;
  std::ofstream(readyPath) << "ready\n";
  for (uint64_t round = 0;; ++round) {
    for (uint64_t a = (round % 64) * 4096; a < bytes; a += 64 * 4096) mem[a] = mem[a] + 1;
    ::usleep(100000);
  }
}

void stop(pid_t pid, int sig) {
  ::kill(pid, sig);
  ::waitpid(pid, nullptr, 0);
}

double cpuSeconds(pid_t pid) { return double(processCpuNs(KernelFs("/"), pid)) / 1e9; }

double rssMiB(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("VmRSS:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  return 0;
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * double(v.size())))];
}

// Runs and run time of mtmd's hook programs, summed over every copy loaded on the machine.
struct HookStats {
  double runs = 0, ns = 0;
};

HookStats hookStats() {
  HookStats total;
  for (const auto& p : profiler::loadedBpfPrograms()) {
    if (std::find(profiler::kAbitHookPrograms.begin(), profiler::kAbitHookPrograms.end(), p.name) == profiler::kAbitHookPrograms.end())
      continue;
    total.runs += double(p.runs);
    total.ns += double(p.runNs);
  }
  return total;
}

struct Measured {
  double cpuCore = 0;  // fraction of one core
  double rss = 0;      // MiB, the largest seen
  HookStats hooks;     // over the measured seconds
  std::vector<double> idleMs, movingMs;
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"mtm-bench-daemon: mtmd's CPU, memory and socket latency with 1 to 200 managed processes"};
  std::string targetsText = "1,50,200", sizeText = "16M", jsonPath;
  double seconds = 10;
  int startNode = -1;
  app.add_option("--targets", targetsText, "Managed process counts, comma-separated (default 1,50,200)");
  app.add_option("--seconds", seconds, "Measured seconds per count (default 10)")->check(CLI::Range(1.0, 3600.0));
  app.add_option("--size", sizeText, "Memory of each workload (default 16M)");
  app.add_option("--start-node", startNode, "Workloads start on this node, so that mtmd moves their hot sets");
  app.add_option("--json", jsonPath, "Also write the table as JSON");
  CLI11_PARSE(app, argc, argv);
  auto size = parseSize(sizeText);
  if (!size) return std::fprintf(stderr, "mtm-bench-daemon: --size: %s\n", size.error().message().c_str()), 2;
  std::vector<int> counts;
  for (std::stringstream in(targetsText); in.good();) {
    std::string item;
    std::getline(in, item, ',');
    auto n = parseUnsigned(item);
    if (!n || *n == 0 || *n > 1000)
      return std::fprintf(stderr, "mtm-bench-daemon: --targets: \"%s\" is not a count 1-1000\n", item.c_str()), 2;
    counts.push_back(static_cast<int>(*n));
  }
  const std::string bin = std::filesystem::canonical("/proc/self/exe").parent_path().string();

  bench::BenchReport report("mtmd managing many processes (status json round trip over its socket)", {{"targets", "", 8, 0},
                                                                                                      {"managed", "MiB", 9, 0},
                                                                                                      {"cpu", "% core", 8, 2},
                                                                                                      {"cpu/target", "ms/s", 11, 3},
                                                                                                      {"rss", "MiB", 7, 1},
                                                                                                      {"rss_target", "MiB", 11, 1},
                                                                                                      {"p50", "ms", 7, 2},
                                                                                                      {"p99", "ms", 7, 2},
                                                                                                      {"p99_moving", "ms", 11, 2},
                                                                                                      {"moving", "samples", 9, 0},
                                                                                                      {"hook_calls", "/s", 11, 0},
                                                                                                      {"hook_call", "ns", 10, 0},
                                                                                                      {"hook_cpu", "% core", 9, 3}});
  // The kernel counts BPF run time only while someone holds a stats descriptor.
  UniqueFd stats(bpf_enable_stats(BPF_STATS_RUN_TIME));
  if (!stats) std::fprintf(stderr, "# BPF run-time stats unavailable (%s): the hook columns read 0\n", std::strerror(errno));
  report.note("each workload: " +
              (startNode >= 0 ? "mtm-test-hotset --size " + sizeText + " --hot-fraction 0.25 --start-node " + std::to_string(startNode)
                              : "a mostly idle service of " + sizeText + " (1/64 of its pages written every 100 ms)") +
              "; mtmd at the embedded default");
  std::vector<double> perTarget, hookNs;
  bool rssOk = true, socketOk = true;
  for (int n : counts) {
    const std::string dir = std::filesystem::temp_directory_path() / ("mtm-bench-daemon." + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const std::string sock = dir + "/mtmd.sock", config = dir + "/mtm.yaml";
    std::ofstream(config) << "daemon:\n  socket: " << sock << "\n  lock_file: " << dir << "/mtmd.lock\n  metrics: 127.0.0.1:0\n";
    const pid_t mtmd = spawn({bin + "/mtmd", "--config", config}, dir + "/mtmd.log");
    bool up = false;
    for (int i = 0; i < 200 && !up; ++i, std::this_thread::sleep_for(std::chrono::milliseconds(50)))
      up = daemon::controlRequest(sock, "ping", std::chrono::milliseconds(500)).ok();
    if (!up) return std::fprintf(stderr, "mtm-bench-daemon: mtmd did not come up (log: %s/mtmd.log)\n", dir.c_str()), 1;
    std::vector<pid_t> workloads;
    for (int i = 0; i < n; ++i) {
      const std::string ready = dir + "/ready" + std::to_string(i);
      if (startNode < 0) {
        workloads.push_back(spawnService(*size, ready));
        continue;
      }
      workloads.push_back(
          spawn({bin + "/mtm-test-hotset", "--size", sizeText, "--hot-fraction", "0.25", "--phases", "1", "--phase-seconds", "100000",
                 "--truth", dir + "/truth" + std::to_string(i), "--ready", ready, "--start-node", std::to_string(startNode)},
                dir + "/hotset.log"));
    }
    for (int i = 0; i < n; ++i) {
      const std::string ready = dir + "/ready" + std::to_string(i);
      for (int t = 0; t < 600 && !std::filesystem::exists(ready); ++t) std::this_thread::sleep_for(std::chrono::milliseconds(50));
      auto r = daemon::controlRequest(sock, "attach " + std::to_string(workloads[i]));
      if (!r) return std::fprintf(stderr, "mtm-bench-daemon: attach: %s\n", r.error().message().c_str()), 1;
    }
    std::fprintf(stderr, "# %d targets attached; measuring %.0f s\n", n, seconds);
    std::this_thread::sleep_for(std::chrono::seconds(2));  // the first intervals build the regions
    Measured m;
    const double cpu0 = cpuSeconds(mtmd);
    const HookStats hooks0 = hookStats();
    const auto start = Clock::now();
    const auto end = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
    while (Clock::now() < end) {
      const auto t0 = Clock::now();
      auto reply = daemon::controlRequest(sock, "status json");
      const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
      const bool moving = reply && reply->find("\"moves_in_flight\":true") != std::string::npos;
      (moving ? m.movingMs : m.idleMs).push_back(ms);
      m.rss = std::max(m.rss, rssMiB(mtmd));
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    m.cpuCore = (cpuSeconds(mtmd) - cpu0) / elapsed;
    const HookStats hooks1 = hookStats();
    m.hooks = {(hooks1.runs - hooks0.runs) / elapsed, (hooks1.ns - hooks0.ns) / elapsed};
    for (pid_t w : workloads) stop(w, SIGKILL);
    stop(mtmd, SIGTERM);
    std::filesystem::remove_all(dir);

    const double managedMiB = double(n) * double(*size) / double(1 << 20);
    const double rssTarget = 32 + managedMiB * 0.001;
    std::vector<double> all = m.idleMs;
    all.insert(all.end(), m.movingMs.begin(), m.movingMs.end());
    const double p99 = percentile(all, 0.99), p99Moving = percentile(m.movingMs, 0.99);
    perTarget.push_back(m.cpuCore * 1000 / n);
    rssOk = rssOk && m.rss <= rssTarget;
    socketOk = socketOk && p99 < 50;
    hookNs.push_back(m.hooks.ns / std::max(1.0, m.hooks.runs));
    report.row({}, {double(n), managedMiB, m.cpuCore * 100, perTarget.back(), m.rss, rssTarget, percentile(all, 0.5), p99, p99Moving,
                    double(m.movingMs.size()), m.hooks.runs, hookNs.back(), m.hooks.ns / 1e9 * 100});
  }
  if (perTarget.size() >= 2) {
    char line[160];
    std::snprintf(line, sizeof line, "cpu per target at %d targets vs %d: %.2fx (flat: 1.00x)", counts.back(), counts[counts.size() - 2],
                  perTarget.back() / std::max(1e-9, perTarget[perTarget.size() - 2]));
    report.footer(line);
    std::snprintf(line, sizeof line, "bpf hook ns per call at %d targets vs %d: %.2fx (flat: 1.00x)", counts.back(),
                  counts[counts.size() - 2], hookNs.back() / std::max(1e-9, hookNs[hookNs.size() - 2]));
    report.footer(line);
  }
  report.verdict(rssOk && socketOk, std::string("socket p99 ") + (socketOk ? "< 50 ms" : ">= 50 ms somewhere") + ", RSS " +
                                        (rssOk ? "within" : "above") + " 32 MiB + 0.1% of the managed memory");
  if (!jsonPath.empty() && !report.writeJson(jsonPath))
    return std::fprintf(stderr, "mtm-bench-daemon: cannot write %s\n", jsonPath.c_str()), 1;
  return 0;
}
