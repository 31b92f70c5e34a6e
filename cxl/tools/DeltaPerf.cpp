// cxlccl-delta-perf: delta publish (docs/cxlccl.md) against the whole Broadcast and AllGather,
// ranks forked on this host sharing a pool file of the tool's own on /dev/shm. Before each timed
// call the writers change a share of their buffer's 64-byte lines (untimed); the table gives the
// time a call (the slowest rank's), the bytes the call moved through the pool (all ranks, from
// cxlcclCommStats: counted, not estimated), the share of lines that changed, and the speed-up
// over the whole call. `--adam` adds a workload that mimics offloaded optimizer steps: float32
// master weights, an Adam step on random gradients, and the bfloat16 copy of the weights
// broadcast (or all-gathered) each step.

#include <sys/mman.h>
#include <unistd.h>

#include <sys/wait.h>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "CollPerf.h"
#include "cxlccl.h"

namespace {

struct Options {
  std::vector<std::string> collectives{"broadcast"};
  std::size_t minBytes = 1 << 20, maxBytes = 64 << 20;
  int factor = 4, ranks = 2, iters = 10, rounds = 1, warmup = 5;
  std::vector<double> changed{0.001, 0.01, 0.1, 0.5, 1.0};
  bool adam = false;
  bool inPlace = false;
  bool hugePages = false;
  int coherence = cxlcclCoherencePool;
};

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, ',');) parts.push_back(part);
  return parts;
}

int usage(int code) {
  std::fprintf(
      code == 0 ? stdout : stderr,
      "usage: cxlccl-delta-perf [-C broadcast,allgather] [-b MIN] [-e MAX] [-f FACTOR] [-g RANKS] [-n ITERS] [-w WARMUP] [--rounds R]\n"
      "                         [--changed F,F,...] [--adam] [--in-place] [--thp] [--coherence pool|hardware|flush|simulate]\n"
      "  -b/-e  sizes of the whole vector (K, M, G; default 1M..64M), -f factor between them (4)\n"
      "  -n     timed calls per row (10), after -w untimed ones (5; the first sends the whole block; auto\n"
      "         learns what pays in the first tens: -w 300 shows it settled)\n"
      "  --rounds R  the three arms in turn R times a row; times are the medians (this machine's copies\n"
      "             switch between a fast and a slow mode every few minutes)\n"
      "  --changed  shares of 64-byte lines each writer changes before a call (0.001,0.01,0.1,0.5,1)\n"
      "  --adam     also: bfloat16 weights after an Adam step each call (the share of lines that\n"
      "             changed is measured, not chosen)\n"
      "  --in-place the root's (AllGather: each rank's) send buffer is its receive buffer\n"
      "  --thp      buffers on transparent huge pages (madvise), as an application's allocator may ask\n"
      "  -h, --help this text; --version the version\n"
      "Arms per row: whole (CXLCCL_DELTA off), delta on, delta auto; each on a communicator of its own.\n");
  return code;
}

bool parse(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "cxlccl-delta-perf: %s needs a value\n", arg.c_str());
        std::exit(usage(2));
      }
      return argv[++i];
    };
    auto size = [&](const std::string& text) {
      std::size_t bytes = 0;
      if (!collperf::parseBytes(text, &bytes)) {
        std::fprintf(stderr, "cxlccl-delta-perf: %s %s: expected a size such as 64M\n", arg.c_str(), text.c_str());
        std::exit(2);
      }
      return bytes;
    };
    if (arg == "-C")
      o->collectives = split(value());
    else if (arg == "-b")
      o->minBytes = size(value());
    else if (arg == "-e")
      o->maxBytes = size(value());
    else if (arg == "-f")
      o->factor = std::atoi(value().c_str());
    else if (arg == "-g")
      o->ranks = std::atoi(value().c_str());
    else if (arg == "-n")
      o->iters = std::atoi(value().c_str());
    else if (arg == "-w")
      o->warmup = std::atoi(value().c_str());
    else if (arg == "--rounds")
      o->rounds = std::atoi(value().c_str());
    else if (arg == "--adam")
      o->adam = true;
    else if (arg == "--in-place")
      o->inPlace = true;
    else if (arg == "--thp")
      o->hugePages = true;
    else if (arg == "--changed") {
      o->changed.clear();
      for (const std::string& f : split(value())) o->changed.push_back(std::atof(f.c_str()));
    } else if (arg == "--coherence") {
      std::string m = value();
      o->coherence = m == "pool"       ? cxlcclCoherencePool
                     : m == "hardware" ? cxlcclCoherenceHardware
                     : m == "flush"    ? cxlcclCoherenceFlush
                     : m == "simulate" ? cxlcclCoherenceSimulate
                                       : -1;
    } else if (arg == "-h" || arg == "--help") {
      std::exit(usage(0));
    } else if (arg == "--version") {
      std::printf("cxlccl-delta-perf %s\n", MTM_VERSION);
      std::exit(0);
    } else {
      std::fprintf(stderr, "cxlccl-delta-perf: unknown option %s\n", arg.c_str());
      std::exit(usage(2));
    }
  }
  bool collsOk =
      std::all_of(o->collectives.begin(), o->collectives.end(), [](const std::string& c) { return c == "broadcast" || c == "allgather"; });
  bool sharesOk = std::all_of(o->changed.begin(), o->changed.end(), [](double f) { return f >= 0 && f <= 1; });
  if (!collsOk || !sharesOk || o->coherence < 0 || o->factor < 2 || o->ranks < 2 || o->ranks > 64 || o->iters < 1 || o->warmup < 1 ||
      o->rounds < 1 || o->minBytes < 4096 || o->maxBytes < o->minBytes) {
    std::fprintf(stderr,
                 "cxlccl-delta-perf: need -C of broadcast/allgather, --changed in 0..1, -f >= 2, "
                 "-g 2..64, -n >= 1, -w >= 1, 4K <= -b <= -e, a known --coherence\n");
    return false;
  }
  return true;
}

// What a writer's buffer goes through between calls: a share of its lines changed at random
// (one byte each), or an Adam step on bfloat16 weights.
class Workload {
 public:
  Workload(std::size_t bytes, double share, bool adam, std::uint64_t seed) : share_(share), adam_(adam), random_(seed), bytes_(bytes) {
    if (!adam_) return;
    std::normal_distribution<float> init(0.0f, 0.02f);
    master_.resize(bytes / 2);
    for (float& w : master_) w = init(random_);
    m_.assign(master_.size(), 0.0f);
    v_.assign(master_.size(), 0.0f);
  }
  void step(unsigned char* buffer) {
    if (adam_) return adamStep(reinterpret_cast<std::uint16_t*>(buffer));
    const std::size_t lines = bytes_ / 64;
    const auto count = static_cast<std::size_t>(share_ * static_cast<double>(lines) + 0.5);
    if (count >= lines) {
      for (std::size_t l = 0; l < lines; ++l) buffer[l * 64 + (random_() & 63)] += 1;
      return;
    }
    for (std::size_t c = 0; c < count; ++c) buffer[(random_() % lines) * 64 + (random_() & 63)] += 1;
  }

 private:
  // Adam (lr 1e-4, betas 0.9/0.999) on N(0, 1e-3) gradients; the weights' bfloat16 copy
  // (round to nearest even) is what is sent.
  void adamStep(std::uint16_t* out) {
    ++t_;
    std::normal_distribution<float> grad(0.0f, 1e-3f);
    const float b1 = 0.9f, b2 = 0.999f, lr = 1e-4f, eps = 1e-8f;
    const float c1 = 1.0f - std::pow(b1, static_cast<float>(t_)), c2 = 1.0f - std::pow(b2, static_cast<float>(t_));
    for (std::size_t i = 0; i < master_.size(); ++i) {
      float g = grad(random_);
      m_[i] = b1 * m_[i] + (1 - b1) * g;
      v_[i] = b2 * v_[i] + (1 - b2) * g * g;
      master_[i] -= lr * (m_[i] / c1) / (std::sqrt(v_[i] / c2) + eps);
      std::uint32_t bits;
      std::memcpy(&bits, &master_[i], sizeof bits);
      out[i] = static_cast<std::uint16_t>((bits + 0x7fff + (bits >> 16 & 1)) >> 16);
    }
  }

  double share_;
  bool adam_;
  std::mt19937_64 random_;
  std::size_t bytes_;
  std::vector<float> master_, m_, v_;
  int t_ = 0;
};

// A zeroed buffer of its own mapping, on transparent huge pages when asked.
class Buffer {
 public:
  Buffer(std::size_t bytes, bool huge) : bytes_(bytes) {
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
      std::perror("cxlccl-delta-perf: mmap");
      std::exit(1);
    }
    if (huge && madvise(p, bytes, MADV_HUGEPAGE) != 0) std::perror("cxlccl-delta-perf: madvise(MADV_HUGEPAGE)");
    data_ = static_cast<unsigned char*>(p);
  }
  ~Buffer() { munmap(data_, bytes_); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  unsigned char* data() const { return data_; }

 private:
  unsigned char* data_;
  std::size_t bytes_;
};

struct Arm {
  const char* name;
  int delta;
  cxlcclComm_t comm = nullptr;
};

double maxOver(cxlcclComm_t comm, double v) {
  double out = 0;
  cxlcclAllReduce(&v, &out, 1, cxlcclDouble, cxlcclMax, comm, nullptr);
  return out;
}
double sumOver(cxlcclComm_t comm, double v) {
  double out = 0;
  cxlcclAllReduce(&v, &out, 1, cxlcclDouble, cxlcclSum, comm, nullptr);
  return out;
}

// One row: the arm's mean time a call (slowest rank), pool bytes a call (all ranks), and the
// share of lines that changed (as the writers' compares found it; -1 where none compared).
struct Row {
  double us = 0, poolBytes = 0, changed = -1;
};

bool runRow(Arm& arm, const Options& o, bool allGather, std::size_t bytes, double share, bool adam, int rank, Row* row) {
  const int n = o.ranks, iters = o.iters, warmup = o.warmup;
  const bool inPlace = o.inPlace, huge = o.hugePages;
  const std::size_t block = allGather ? bytes / static_cast<std::size_t>(n) / 64 * 64 : bytes;
  Buffer own(block, huge), recv(allGather ? block * static_cast<std::size_t>(n) : block, huge);
  // In place: the send buffer is this rank's block of the receive buffer.
  unsigned char* send = !inPlace ? own.data() : recv.data() + (allGather ? static_cast<std::size_t>(rank) * block : 0);
  Workload work(block, share, adam, 7 + static_cast<std::uint64_t>(rank));
  const bool writes = allGather || rank == 0;
  cxlcclCommStats_t before{}, after{};
  double seconds = 0;
  // Untimed first: a new buffer goes whole, and auto finds out how much changes (a buffer at the
  // address of the last row's looks all changed at first).
  for (int i = 0; i < iters + warmup; ++i) {
    if (writes) work.step(send);
    if (i == warmup) cxlcclCommStats(arm.comm, &before);
    maxOver(arm.comm, 0);  // everyone starts together
    auto start = std::chrono::steady_clock::now();
    cxlcclResult_t r = allGather ? cxlcclAllGather(send, recv.data(), block, cxlcclUint8, arm.comm, nullptr)
                                 : cxlcclBroadcast(send, recv.data(), block, cxlcclUint8, 0, arm.comm, nullptr);
    if (r != cxlcclSuccess) {
      std::fprintf(stderr, "rank %d: %s: %s\n", rank, arm.name, cxlcclGetLastError(arm.comm));
      return false;
    }
    if (i >= warmup) seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  cxlcclCommStats(arm.comm, &after);
  // Every rank's copy of each writer's block, as that writer holds it: the same hash everywhere.
  for (int w = 0; w < (allGather ? n : 1); ++w) {
    const unsigned char* mine = rank == w ? send : recv.data() + (allGather ? static_cast<std::size_t>(w) * block : 0);
    std::uint64_t h = 1469598103934665603ull, low = 0, high = 0;
    for (std::size_t i = 0; i < block; i += 8) {
      std::uint64_t word = 0;
      std::memcpy(&word, mine + i, std::min<std::size_t>(8, block - i));
      h = (h ^ word) * 1099511628211ull;
    }
    cxlcclAllReduce(&h, &low, 1, cxlcclUint64, cxlcclMin, arm.comm, nullptr);
    cxlcclAllReduce(&h, &high, 1, cxlcclUint64, cxlcclMax, arm.comm, nullptr);
    if (low != high) {
      std::fprintf(stderr, "rank %d: %s: writer %d's block arrived wrong\n", rank, arm.name, w);
      return false;
    }
  }
  row->us = maxOver(arm.comm, seconds / iters * 1e6);
  // The tool's own start-together AllReduce moves 8-byte words; left out of the bytes.
  double moved = static_cast<double>(after.poolBytesWritten - before.poolBytesWritten + after.poolBytesRead - before.poolBytesRead);
  row->poolBytes = sumOver(arm.comm, moved) / iters;
  double compared = sumOver(arm.comm, static_cast<double>(after.deltaLinesCompared - before.deltaLinesCompared));
  double changed = sumOver(arm.comm, static_cast<double>(after.deltaLinesChanged - before.deltaLinesChanged));
  row->changed = compared > 0 ? changed / compared : -1;
  return true;
}

int runRank(const Options& o, const cxlcclUniqueId* ids, int rank) {
  Arm arms[] = {{"whole", cxlcclDeltaOff}, {"delta-on", cxlcclDeltaOn}, {"delta-auto", cxlcclDeltaAuto}};
  for (std::size_t a = 0; a < 3; ++a) {
    cxlcclConfig_t config = CXLCCL_CONFIG_INITIALIZER;
    config.coherence = o.coherence;
    config.delta = arms[a].delta;
    if (cxlcclCommInitRankConfig(&arms[a].comm, o.ranks, ids[a], rank, &config) != cxlcclSuccess) {
      std::fprintf(stderr, "rank %d: %s\n", rank, cxlcclGetLastError(nullptr));
      return 1;
    }
  }
  if (rank == 0)
    std::printf(
        "# cxlccl-delta-perf: %d ranks, %s, %d timed calls a row after %d untimed, %d round(s); us: a call, the slowest\n"
        "# rank (median"
        " over the rounds); pool MB: bytes\n"
        "# written + read in the pool a call, all ranks (cxlcclCommStats); changed: share of lines the\n"
        "# writers' compares found changed; x whole: the whole call's time over this arm's\n"
        "#%-10s %11s %9s %11s %10s %10s %8s %8s\n",
        o.ranks, o.inPlace ? "in place" : "out of place", o.iters, o.warmup, o.rounds, "collective", "size(B)", "changed", "arm", "us",
        "pool MB", "changed", "x whole");
  std::vector<double> shares = o.changed;
  if (o.adam) shares.push_back(-1);  // the Adam workload
  for (const std::string& coll : o.collectives) {
    for (std::size_t bytes = o.minBytes; bytes <= o.maxBytes; bytes *= static_cast<std::size_t>(o.factor)) {
      for (double share : shares) {
        Row rows[3];
        std::vector<double> times[3];
        for (int round = 0; round < o.rounds; ++round) {
          for (std::size_t a = 0; a < 3; ++a) {
            if (!runRow(arms[a], o, coll == "allgather", bytes, share, share < 0, rank, &rows[a])) return 1;
            times[a].push_back(rows[a].us);
          }
        }
        for (std::size_t a = 0; a < 3; ++a) {
          std::sort(times[a].begin(), times[a].end());
          rows[a].us = times[a][times[a].size() / 2];
        }
        if (rank != 0) continue;
        char label[16];
        if (share < 0)
          std::snprintf(label, sizeof label, "adam-bf16");
        else
          std::snprintf(label, sizeof label, "%.4g%%", share * 100);
        for (std::size_t a = 0; a < 3; ++a) {
          char changed[16] = "-";
          if (rows[a].changed >= 0) std::snprintf(changed, sizeof changed, "%.4f", rows[a].changed);
          std::printf(" %-10s %11zu %9s %11s %10.1f %10.2f %8s %7.2fx\n", coll.c_str(), bytes, label, arms[a].name, rows[a].us,
                      rows[a].poolBytes / 1e6, changed, rows[0].us / rows[a].us);
        }
        std::fflush(stdout);
      }
    }
  }
  for (Arm& arm : arms) cxlcclCommDestroy(arm.comm);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!parse(argc, argv, &o)) return 2;
  // A pool of the tool's own, big enough for three communicators' rings and every mirror.
  std::string pool = "/dev/shm/cxlccl-delta-perf." + std::to_string(getpid()) + ".pool";
  std::size_t need = 3 * o.maxBytes * static_cast<std::size_t>(o.ranks) + (512u << 20);
  setenv("CXLCCL_POOL", pool.c_str(), 1);
  setenv("CXLCCL_POOL_SIZE", std::to_string(need).c_str(), 1);
  cxlcclUniqueId ids[3];
  for (cxlcclUniqueId& id : ids) {
    if (cxlcclGetUniqueId(&id) != cxlcclSuccess) {
      std::fprintf(stderr, "cxlccl-delta-perf: %s\n", cxlcclGetLastError(nullptr));
      unlink(pool.c_str());
      return 1;
    }
  }
  std::vector<pid_t> children;
  for (int rank = 0; rank < o.ranks; ++rank) {
    pid_t pid = fork();
    if (pid == 0) {
      collperf::bindToCore(rank, o.ranks);
      int code = runRank(o, ids, rank);
      std::fflush(stdout);
      _exit(code);
    }
    children.push_back(pid);
  }
  int result = 0;
  for (pid_t pid : children) {
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) result = 1;
  }
  unlink(pool.c_str());
  return result;
}
