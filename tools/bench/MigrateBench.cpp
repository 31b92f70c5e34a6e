// mtm-bench-migrate: migration throughput of mtm's move_pages mover, by batch size and thread
// count, for 4 KiB and THP memory, against numactl's migratepages(8) moving the same pages and a
// plain memcpy of the same bytes between the same nodes, in the same run. Needs two NUMA nodes
// with memory (run it in the VM lab: tools/bench-migrate).

#include <numa.h>
#include <numaif.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>

#include <CLI/CLI.hpp>

#include "BenchReport.h"
#include "mtm/Log.h"
#include "mtm/Parse.h"
#include "mtm/migrate/LiveKernel.h"
#include "mtm/migrate/MovePagesMover.h"
#include "mtm/migrate/Placement.h"

namespace {

using namespace mtm;
using Clock = std::chrono::steady_clock;
constexpr uint64_t kThp = 2ull << 20;
constexpr double kMiB = 1 << 20;

// A process holding `size` bytes of touched memory on `node`, of one kind, until killed.
struct Holder {
  pid_t pid = -1;
  uint64_t start = 0, size = 0;

  Holder(uint64_t bytes, bool thp, int node) : size(bytes) {
    int fds[2];
    if (pipe(fds) != 0) return;
    pid = fork();
    if (pid == 0) {
      auto* raw = static_cast<char*>(mmap(nullptr, bytes + kThp, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
      auto* p = reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(raw) + kThp - 1) & ~(kThp - 1));
      madvise(p, bytes, thp ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
      unsigned long mask = 1ul << node;
      set_mempolicy(MPOL_BIND, &mask, sizeof mask * 8);
      std::memset(p, 1, bytes);
      set_mempolicy(MPOL_DEFAULT, nullptr, 0);
      uint64_t addr = reinterpret_cast<uint64_t>(p);
      if (write(fds[1], &addr, sizeof addr) != sizeof addr) _exit(1);
      for (;;) pause();
    }
    close(fds[1]);
    if (read(fds[0], &start, sizeof start) != sizeof start) start = 0;
    close(fds[0]);
  }
  ~Holder() {
    if (pid > 0) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  }
  MoveRequest to(int node) const {
    MoveRequest r;
    r.pid = pid;
    r.ranges = {{start, start + size}};
    r.toNode = node;
    return r;
  }
};

struct Config {
  uint64_t size = 128ull << 20;
  int from = 0, to = 1;
  std::vector<uint32_t> batches{64, 256, 1024, 4096};
  std::vector<uint32_t> threads{1, 2};
  std::string json;
};

double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// Bytes of the holder's range resident on `node`.
uint64_t residentOn(migrate::LiveKernel& k, const Holder& h, int node) {
  auto p = migrate::queryPlacement(k.deps(), h.pid, {{h.start, h.start + h.size}});
  if (!p) return 0;
  auto it = p->byNode.find(node);
  return it == p->byNode.end() ? 0 : it->second.total() * kPageSize;
}

double migratepagesRate(migrate::LiveKernel& k, const Holder& h, int from, int to) {
  const auto t0 = Clock::now();
  pid_t child = fork();
  if (child == 0) {
    const std::string pid = std::to_string(h.pid), f = std::to_string(from), t = std::to_string(to);
    execlp("migratepages", "migratepages", pid.c_str(), f.c_str(), t.c_str(), nullptr);
    _exit(127);
  }
  int status = 0;
  waitpid(child, &status, 0);
  const double s = seconds(Clock::now() - t0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return -1;
  return static_cast<double>(residentOn(k, h, to)) / s;
}

double memcpyRate(uint64_t size, int from, int to) {
  void* src = numa_alloc_onnode(size, from);
  void* dst = numa_alloc_onnode(size, to);
  std::memset(src, 1, size);
  std::memset(dst, 2, size);
  const auto t0 = Clock::now();
  std::memcpy(dst, src, size);
  const double s = seconds(Clock::now() - t0);
  numa_free(src, size);
  numa_free(dst, size);
  return static_cast<double>(size) / s;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"mtm-bench-migrate: move_pages mover throughput vs migratepages(8) and memcpy", "mtm-bench-migrate"};
  Config cfg;
  std::string size = "128M";
  app.add_option("--size", size, "Bytes to move per run (default 128M)");
  app.add_option("--from", cfg.from, "Source node (default 0)");
  app.add_option("--to", cfg.to, "Destination node (default 1)");
  app.add_option("--batches", cfg.batches, "Batch sizes (addresses per call)")->delimiter(',');
  app.add_option("--threads", cfg.threads, "Thread counts")->delimiter(',');
  app.add_option("--json", cfg.json, "Write the results as JSON to FILE");
  CLI11_PARSE(app, argc, argv);
  auto bytes = mtm::parseSize(size);
  if (!bytes || *bytes % kThp != 0) {
    std::fprintf(stderr, "mtm-bench-migrate: --size: expected a multiple of 2MiB, got \"%s\"\n", size.c_str());
    return 2;
  }
  cfg.size = *bytes;
  mtm::log::setup("bench", spdlog::level::warn);
  if (numa_available() < 0 || numa_max_node() < std::max(cfg.from, cfg.to)) {
    std::fprintf(stderr, "mtm-bench-migrate: needs NUMA nodes %d and %d (run it in the VM lab: tools/bench-migrate)\n", cfg.from, cfg.to);
    return 77;
  }

  mtm::bench::BenchReport report("mtm migration throughput: move_pages mover vs migratepages(8) vs memcpy, node " +
                                     std::to_string(cfg.from) + " -> " + std::to_string(cfg.to),
                                 {{"kind", "", 6, -1},
                                  {"method", "", 13, -1},
                                  {"batch", "", 6, 0},
                                  {"threads", "", 7, 0},
                                  {"size", "MiB", 9, 0},
                                  {"time", "ms", 9, 1},
                                  {"rate", "MiB/s", 10, 1},
                                  {"vs_migratepages", "x", 15, 2},
                                  {"vs_memcpy", "x", 9, 2}});
  char host[64] = "";
  gethostname(host, sizeof host);
  report.note("host " + std::string(host) + ", " + std::to_string(numa_num_configured_nodes()) +
              " nodes; each run moves the same pages from node " + std::to_string(cfg.from));

  migrate::LiveKernel kernel;
  bool pass = true;
  std::string why;
  for (bool thp : {false, true}) {
    const std::string kind = thp ? "thp" : "4k";
    Holder holder(cfg.size, thp, cfg.from);
    if (holder.start == 0) {
      std::fprintf(stderr, "mtm-bench-migrate: could not start the %s holder process\n", kind.c_str());
      return 1;
    }
    migrate::MoverOptions back;
    back.batchPages = 4096;
    auto reset = [&] { migrate::MovePagesMover({kernel.deps(), back}).execute({holder.to(cfg.from)}); };

    reset();
    const double mp = migratepagesRate(kernel, holder, cfg.from, cfg.to);
    const double mc = memcpyRate(cfg.size, cfg.from, cfg.to);
    double best = 0;
    for (uint32_t batch : cfg.batches) {
      for (uint32_t threads : cfg.threads) {
        reset();
        migrate::MoverOptions o;
        o.batchPages = batch;
        o.threads = threads;
        const auto t0 = Clock::now();
        auto st = migrate::MovePagesMover({kernel.deps(), o}).execute({holder.to(cfg.to)});
        const double s = seconds(Clock::now() - t0);
        const double rate = static_cast<double>(st.pagesMoved * kPageSize) / s;
        if (st.pagesMoved * kPageSize != cfg.size)
          report.note("warning: " + kind + " batch " + std::to_string(batch) + " moved only " + std::to_string(st.pagesMoved) + " pages");
        best = std::max(best, rate);
        report.row({kind, "mtm"},
                   {double(batch), double(threads), cfg.size / kMiB, s * 1e3, rate / kMiB, mp > 0 ? rate / mp : 0, rate / mc});
      }
    }
    report.row({kind, "migratepages"}, {0, 1, cfg.size / kMiB, cfg.size / mp * 1e3, mp / kMiB, 1, mp / mc});
    report.row({kind, "memcpy"}, {0, 1, cfg.size / kMiB, cfg.size / mc * 1e3, mc / kMiB, mc / mp, 1});
    char line[200];
    std::snprintf(line, sizeof line, "%s: best mtm %.1f MiB/s = %.2fx migratepages, %.2fx memcpy", kind.c_str(), best / kMiB, best / mp,
                  best / mc);
    report.footer(line);
    if (mp <= 0 || best < mp) pass = false;
    why += (why.empty() ? "" : "; ") + std::string(line);
  }
  report.verdict(pass, "target: best mtm rate >= migratepages for 4k and thp (" + why + ")");
  if (!cfg.json.empty() && !report.writeJson(cfg.json)) std::fprintf(stderr, "mtm-bench-migrate: cannot write %s\n", cfg.json.c_str());
  return 0;
}
