#include "CollPerf.h"

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace collperf {
namespace {

struct CollInfo {
  Coll coll;
  const char* name;
  bool rooted;
  bool reduces;
};

const CollInfo kColls[] = {{Coll::allGather, "allgather", false, false},
                           {Coll::broadcast, "broadcast", true, false},
                           {Coll::gather, "gather", true, false},
                           {Coll::scatter, "scatter", true, false},
                           {Coll::reduce, "reduce", true, true},
                           {Coll::allReduce, "allreduce", false, true},
                           {Coll::reduceScatter, "reducescatter", false, true},
                           {Coll::allToAll, "alltoall", false, false},
                           {Coll::sendRecv, "sendrecv", false, false}};

// nccl-tests: "size" is the whole vector the collective moves, count its elements;
// algbw = size / time; busbw = algbw x the factor that makes it comparable to a link's speed.
double busFactor(Coll coll, int n) {
  double nd = n;
  switch (coll) {
    case Coll::allReduce:
      return 2 * (nd - 1) / nd;
    case Coll::allGather:
    case Coll::reduceScatter:
    case Coll::allToAll:
    case Coll::gather:
    case Coll::scatter:
      return (nd - 1) / nd;
    default:
      return 1;
  }
}

// Elements per rank's block for a collective whose whole vector has `total` elements.
std::size_t blockCount(Coll coll, std::size_t total, int n) {
  switch (coll) {
    case Coll::allGather:
    case Coll::reduceScatter:
    case Coll::allToAll:
    case Coll::gather:
    case Coll::scatter:
      return total / static_cast<std::size_t>(n);
    default:
      return total;
  }
}

float inputOf(int rank, std::size_t i) { return static_cast<float>((rank + 1) * 3 + static_cast<int>(i % 7)); }

// Checks one result; the number of wrong elements.
std::size_t wrongElements(Coll coll, const std::vector<float>& recv, std::size_t count, int rank, int n, int root) {
  std::size_t wrong = 0;
  auto expect = [&](std::size_t i, float value) { wrong += recv[i] != value ? 1 : 0; };
  std::size_t nz = static_cast<std::size_t>(n);
  switch (coll) {
    case Coll::allGather:
      for (std::size_t i = 0; i < count * nz; ++i) expect(i, inputOf(static_cast<int>(i / count), i % count));
      break;
    case Coll::gather:
      if (rank == root)
        for (std::size_t i = 0; i < count * nz; ++i) expect(i, inputOf(static_cast<int>(i / count), i % count));
      break;
    case Coll::broadcast:
      for (std::size_t i = 0; i < count; ++i) expect(i, inputOf(root, i));
      break;
    case Coll::scatter:
      for (std::size_t i = 0; i < count; ++i) expect(i, inputOf(root, rank * count + i));
      break;
    case Coll::allToAll:
      for (std::size_t i = 0; i < count * nz; ++i) expect(i, inputOf(static_cast<int>(i / count), rank * count + i % count));
      break;
    case Coll::reduce:
    case Coll::allReduce:
    case Coll::reduceScatter: {
      if (coll == Coll::reduce && rank != root) break;
      std::size_t base = coll == Coll::reduceScatter ? rank * count : 0;
      for (std::size_t i = 0; i < count; ++i) {
        float sum = 0;
        for (int r = 0; r < n; ++r) sum += inputOf(r, base + i);
        expect(i, sum);
      }
      break;
    }
    case Coll::sendRecv: {
      int from = (rank - 1 + n) % n;
      for (std::size_t i = 0; i < count; ++i) expect(i, inputOf(from, i));
      break;
    }
  }
  return wrong;
}

}  // namespace

// Rank `rank` on the rank-th CPU this process may use, when there are at least `ranks` of them
// -- as mpirun binds ranks to cores by default. Forked ranks otherwise may start on one CPU and
// share it, handing it back and forth at each wait, through a whole short run: its times then
// measure the scheduler (seen: 25 µs a call instead of 7 at 64 KiB, both ranks 11 ms on CPU 0).
void bindToCore(int rank, int ranks) {
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0 || CPU_COUNT(&allowed) < ranks) return;
  for (int cpu = 0, seen = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &allowed) || seen++ != rank) continue;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    if (sched_setaffinity(0, sizeof one, &one) != 0) std::perror("cxlccl-perf: sched_setaffinity");
    return;
  }
}

bool parseBytes(const std::string& text, std::size_t* bytes) {
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  std::string unit(end);
  if (end == text.c_str() || v < 0) return false;
  if (unit == "K" || unit == "k")
    v *= 1024;
  else if (unit == "M" || unit == "m")
    v *= 1024 * 1024;
  else if (unit == "G" || unit == "g")
    v *= 1024.0 * 1024 * 1024;
  else if (!unit.empty())
    return false;
  *bytes = static_cast<std::size_t>(v);
  return true;
}

namespace {

void printUsage(FILE* to, const char* program, bool hasRanks, bool hasExtra) {
  std::fprintf(to,
               "usage: %s [-C COLLS] [-b MIN] [-e MAX] [-f FACTOR] [-w WARMUP] [-W SECONDS] [-n ITERS] [-T SECONDS] [-r ROOT] [-c 0|1]%s%s "
               "[--json FILE]\n"
               "  -n   timed iterations per size, at least (default 20); -T: more, until they take SECONDS (default 0.05)\n"
               "  -w   untimed iterations first, at least (default 5); -W: more, until they take SECONDS (default 0.05):\n"
               "       a size's first calls pay for pages and cache lines that later calls find ready\n"
               "  -C   comma-separated: allgather,broadcast,gather,scatter,reduce,allreduce,reducescatter,alltoall,sendrecv or all\n"
               "  -b/-e sizes of the whole vector in bytes (K, M, G), -f multiplication factor between sizes\n"
               "  -c 1 checks every result once per size (#wrong column)%s\n"
               "  -h, --help this text; --version the version\n"
               "Prints nccl-tests' table (float, sum): size, count, time, algbw, busbw, #wrong.\n"
               "Example: %s -C allgather -b 64K -e 64M%s\n",
               program, hasRanks ? " [-g RANKS]" : "",
               hasExtra ? " [--coherence pool|hardware|flush|simulate] [--gpu|--pool-buffers] [--bind core|none]" : "",
               hasExtra ? "\n  --gpu: buffers in GPU memory (device 0, one stream per rank; needs a GPU)"
                          "\n  --pool-buffers: buffers from cxlcclMemAlloc (read where they lie)"
                          "\n  --bind core (default): rank r runs on the r-th CPU it may use, when the ranks are no\n"
                          "       more than those CPUs (as mpirun binds 2 ranks); none: where the scheduler puts them"
                        : "",
               program, hasRanks ? " -g 2" : "");
}

}  // namespace

bool parseSettings(int argc, char** argv, const char* program, Settings* s, int* ranks, std::string* extra) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s: %s needs a value\n", program, arg.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    auto size = [&](const std::string& text) {
      std::size_t bytes = 0;
      if (!parseBytes(text, &bytes)) {
        std::fprintf(stderr, "%s: %s %s: expected a size such as 64K\n", program, arg.c_str(), text.c_str());
        std::exit(2);
      }
      return bytes;
    };
    if (arg == "-b")
      s->minBytes = size(value());
    else if (arg == "-e")
      s->maxBytes = size(value());
    else if (arg == "-f")
      s->factor = std::atoi(value().c_str());
    else if (arg == "-w")
      s->warmup = std::atoi(value().c_str());
    else if (arg == "-n")
      s->iters = std::atoi(value().c_str());
    else if (arg == "-W")
      s->warmSeconds = std::atof(value().c_str());
    else if (arg == "-T")
      s->minSeconds = std::atof(value().c_str());
    else if (arg == "-r")
      s->root = std::atoi(value().c_str());
    else if (arg == "-c")
      s->check = std::atoi(value().c_str()) != 0;
    else if (arg == "-C")
      s->collectives = value();
    else if (arg == "-g" && ranks != nullptr)
      *ranks = std::atoi(value().c_str());
    else if (arg == "--json")
      s->json = value();
    else if (arg == "--coherence" && extra != nullptr)
      *extra = value();
    else if (arg == "--gpu" && extra != nullptr)
      s->gpu = true;
    else if (arg == "--pool-buffers" && extra != nullptr)
      s->poolBuffers = true;
    else if (arg == "--bind" && extra != nullptr) {
      std::string how = value();
      if (how != "core" && how != "none") {
        std::fprintf(stderr, "%s: --bind %s: expected core or none\n", program, how.c_str());
        std::exit(2);
      }
      s->bindCores = how == "core";
    } else if (arg == "-h" || arg == "--help") {
      printUsage(stdout, program, ranks != nullptr, extra != nullptr);
      return false;
    } else if (arg == "--version") {
      std::printf("%s %s\n", program, MTM_VERSION);
      return false;
    } else {
      std::fprintf(stderr, "%s: unknown option %s\n", program, arg.c_str());
      printUsage(stderr, program, ranks != nullptr, extra != nullptr);
      std::exit(2);
    }
  }
  if (s->factor < 2 || s->minBytes < 4 || s->maxBytes < s->minBytes || s->iters < 1 || s->minSeconds < 0 || s->minSeconds > 60 ||
      s->warmup < 0 || s->warmSeconds < 0 || s->warmSeconds > 60) {
    std::fprintf(stderr, "%s: need -f >= 2, 4 <= -b <= -e, -n >= 1, -w >= 0, 0 <= -T <= 60, 0 <= -W <= 60\n", program);
    std::exit(2);
  }
  return true;
}

namespace {

// Runs `call` at least s.warmup times (once at least) and, in rounds that double, until the
// slowest rank has spent s.warmSeconds: a size's first calls pay for what later ones find ready
// (pages mapped, lines cached; 4 KiB calls took 3-10x their later time for their first
// milliseconds on the development VM, in libcxlccl and the MPIs alike). Every rank runs the same
// rounds. Returns the last round's seconds a call on the slowest rank; `ok` turns false on every
// rank when a call fails on one.
double warmUp(Backend& backend, const Settings& s, const std::function<bool()>& call, bool* ok) {
  constexpr double kFailed = 1e30;
  double spent = 0;
  for (int round = std::max(1, s.warmup);; round *= 2) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < round && *ok; ++i) *ok = call();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double perCall = backend.maxOverRanks(*ok ? seconds / round : kFailed);
    if (perCall >= kFailed) *ok = false;
    spent += perCall * round;
    if (!*ok || spent >= s.warmSeconds) return perCall;
  }
}

}  // namespace

int runBenchmark(Backend& backend, const Settings& s) {
  const int n = backend.nranks();
  const int rank = backend.rank();
  FILE* json = nullptr;
  if (rank == 0 && !s.json.empty()) {
    json = std::fopen(s.json.c_str(), "w");
    if (json == nullptr) {
      std::perror(s.json.c_str());
      return 1;
    }
    std::fprintf(json, "{\"transport\": \"%s\", \"nranks\": %d, \"rows\": [\n", backend.describe().c_str(), n);
  }
  if (rank == 0) {
    std::printf(
        "# %s, %d ranks, float, sum, at least %d warmup (and %.2f s) + %d timed iterations (and %.2f s) per size; #wrong summed over "
        "ranks\n",
        backend.describe().c_str(), n, s.warmup, s.warmSeconds, s.iters, s.minSeconds);
    std::printf("#%14s %12s %7s %6s %5s %10s %9s %9s %7s\n", "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong");
    std::printf("#%14s %12s %7s %6s %5s %10s %9s %9s %7s\n", "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "");
  }
  bool firstRow = true;
  std::size_t wrongTotal = 0;
  for (const CollInfo& info : kColls) {
    if (s.collectives != "all" && ("," + s.collectives + ",").find("," + std::string(info.name) + ",") == std::string::npos) continue;
    if (rank == 0) std::printf("# %s\n", info.name);
    for (std::size_t bytes = s.minBytes; bytes <= s.maxBytes; bytes *= static_cast<std::size_t>(s.factor)) {
      std::size_t total = bytes / sizeof(float);
      std::size_t count = blockCount(info.coll, total, n);
      if (count == 0) continue;
      std::size_t nz = static_cast<std::size_t>(n);
      std::size_t sendCount = count, recvCount = count;
      switch (info.coll) {
        case Coll::allGather:
        case Coll::gather:
          recvCount = count * nz;
          break;
        case Coll::scatter:
        case Coll::reduceScatter:
          sendCount = count * nz;
          break;
        case Coll::allToAll:
          sendCount = recvCount = count * nz;
          break;
        default:
          break;
      }
      std::vector<float> send(sendCount), recv(recvCount, -1.0f);
      for (std::size_t i = 0; i < sendCount; ++i) send[i] = inputOf(rank, i);
      backend.upload(send.data(), sendCount);
      std::size_t wrong = 0;
      bool ok = true;
      if (s.check) {
        ok = backend.run(info.coll, send.data(), recv.data(), count, s.root);
        backend.download(recv.data(), recvCount);
        wrong = wrongElements(info.coll, recv, count, rank, n, s.root);
      }
      backend.barrier();
      const double perCall = warmUp(
          backend, s, [&] { return backend.run(info.coll, send.data(), recv.data(), count, s.root); }, &ok);
      // Small sizes take microseconds: enough iterations that the timed runs last minSeconds, so
      // a scheduler tick or a frequency step does not decide the figure. Every rank runs the same
      // count (the slowest rank's estimate).
      const int iters = std::max(s.iters, static_cast<int>(std::min(1e6, s.minSeconds / std::max(perCall, 1e-9))));
      backend.barrier();
      auto start = std::chrono::steady_clock::now();
      for (int i = 0; i < iters && ok; ++i) ok = backend.run(info.coll, send.data(), recv.data(), count, s.root);
      double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / iters;
      if (!ok) {
        std::fprintf(stderr, "rank %d: %s of %zu bytes failed\n", rank, info.name, bytes);
        return 1;
      }
      seconds = backend.maxOverRanks(seconds);
      double wrongAll = backend.sumOverRanks(static_cast<double>(wrong));
      double size = static_cast<double>(count *
                                        (info.coll == Coll::allGather || info.coll == Coll::gather || info.coll == Coll::scatter ||
                                                 info.coll == Coll::reduceScatter || info.coll == Coll::allToAll
                                             ? nz
                                             : 1) *
                                        sizeof(float));
      double algbw = size / seconds / 1e9;
      double busbw = algbw * busFactor(info.coll, n);
      wrongTotal += static_cast<std::size_t>(wrongAll);
      if (rank == 0) {
        std::printf(" %14.0f %12zu %7s %6s %5d %10.2f %9.2f %9.2f %7.0f\n", size, count, "float", info.reduces ? "sum" : "none",
                    info.rooted ? s.root : -1, seconds * 1e6, algbw, busbw, wrongAll);
        std::fflush(stdout);
        if (json != nullptr) {
          std::fprintf(json,
                       "%s  {\"collective\": \"%s\", \"size\": %.0f, \"count\": %zu, \"time_us\": %.3f, "
                       "\"algbw\": %.4f, \"busbw\": %.4f, \"wrong\": %.0f}",
                       firstRow ? "" : ",\n", info.name, size, count, seconds * 1e6, algbw, busbw, wrongAll);
          firstRow = false;
        }
      }
    }
  }
  if (rank == 0) {
    std::printf("# %s: %zu wrong elements\n", wrongTotal == 0 ? "all results checked and right" : "WRONG RESULTS", wrongTotal);
    if (json != nullptr) {
      std::fprintf(json, "\n]}\n");
      std::fclose(json);
    }
  }
  return wrongTotal == 0 ? 0 : 1;
}

}  // namespace collperf
