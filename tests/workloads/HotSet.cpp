// mtm-test-hotset: a workload with a known hot set that moves. It maps SIZE bytes cut into
// 2 MiB regions; in each phase a known subset (--hot-fraction of the regions) is touched over
// and over -- one write per 4 KiB page -- and the rest is left alone. The subset is scattered
// (pattern random: groups of four regions, pseudo-random per phase) or one window that slides
// to the next disjoint place each phase (pattern sliding). Recurring patterns, for predictive
// placement: cyclic -- the sliding windows 0, 1, ..., K-1 (--cycle K, default 3) over and over;
// recurring -- window 0 every other phase, a random subset in between (a recurring phase inside
// noise). --jitter J varies each phase's length by up to J (0.2: +-20%, the same lengths every
// run). Every phase is announced in the
// truth file, with its start time and hot region indices. Each page carries a check word that
// is verified at the end: "wrong_pages=N", exit status 1 when N > 0.
//
// --trickle F reads the cold majority at a trickle: each pass over the hot set also reads
// F x (hot pages) pages of the whole mapping, round-robin, so every page is read now and then
// (lukewarm, not idle).
//
// --start-node N places every page on node N first (mbind MPOL_BIND while it is touched, then
// back to the default policy, so that NUMA balancing and other tiering systems may move it).
//
//   mtm-test-hotset --size 1G [--thp] --hot-fraction 0.1
//                   [--pattern random|sliding|cyclic|recurring] [--cycle 3] [--jitter 0.2]
//                   [--start-node N] [--trickle 0.01] --phases 4 --phase-seconds 5
//                   --truth /tmp/truth.jsonl [--ready /tmp/ready]

#include <numaif.h>
#include <signal.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "SizeArg.h"

namespace {

constexpr uint64_t kPage = 4096, kRegion = 2ull << 20;
volatile sig_atomic_t gStop = 0;
void onSignal(int) { gStop = 1; }

double now() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) / 1e9;
}

// The word page `page` carries at offset kCheckOffset (the touches write offset 0).
constexpr uint64_t kCheckOffset = 64;
uint64_t checkWord(uint64_t page) { return page * 0x9E3779B97F4A7C15ull ^ 0x6d746d2d686f7421ull; }

// Whether region i is hot in `phase` (random): groups of four regions, a pseudo-random 1 in `every`.
bool hot(uint64_t i, int phase, uint64_t every) {
  uint64_t h = (i / 4 + 1) * 0x9E3779B97F4A7C15ull ^ (uint64_t(phase) + 1) * 0xC2B2AE3D27D4EB4Full;
  h ^= h >> 29;
  return h % every == 0;
}

// Phase `phase`'s length: `seconds`, varied by up to +-jitter, pseudo-random and the same every run.
double phaseLength(double seconds, double jitter, int phase) {
  uint64_t h = (uint64_t(phase) + 7) * 0x9E3779B97F4A7C15ull;
  h ^= h >> 31;
  const double u = double(h % 2001) / 1000 - 1;  // [-1, 1]
  return seconds * (1 + jitter * u);
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t size = 1ull << 30;
  bool thp = false;
  double hotFraction = 0.1, phaseSeconds = 5, trickle = 0, jitter = 0;
  int phases = 4, cycle = 3;
  std::string truth, ready, pattern = "random";
  int startNode = -1;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&] { return i + 1 < argc ? argv[++i] : (std::fprintf(stderr, "%s needs a value\n", a.c_str()), std::exit(2), ""); };
    if (a == "--size")
      size = sizeArg(next());
    else if (a == "--thp")
      thp = true;
    else if (a == "--hot-fraction")
      hotFraction = std::atof(next());
    else if (a == "--phases")
      phases = std::atoi(next());
    else if (a == "--phase-seconds")
      phaseSeconds = std::atof(next());
    else if (a == "--truth")
      truth = next();
    else if (a == "--pattern")
      pattern = next();
    else if (a == "--start-node")
      startNode = std::atoi(next());
    else if (a == "--ready")
      ready = next();
    else if (a == "--trickle")
      trickle = std::atof(next());
    else if (a == "--cycle")
      cycle = std::atoi(next());
    else if (a == "--jitter")
      jitter = std::atof(next());
    else {
      std::fprintf(stderr,
                   "usage: %s --size 1G [--thp] --hot-fraction 0.1 [--pattern random|sliding|cyclic|recurring] [--cycle K] [--jitter J] "
                   "[--start-node N] [--trickle F] --phases 4 --phase-seconds 5 --truth FILE [--ready FILE]\n",
                   argv[0]);
      return 2;
    }
  }
  if (pattern != "random" && pattern != "sliding" && pattern != "cyclic" && pattern != "recurring") {
    std::fprintf(stderr, "--pattern: expected random, sliding, cyclic or recurring, got \"%s\"\n", pattern.c_str());
    return 2;
  }
  if (cycle < 1 || jitter < 0 || jitter >= 1) {
    std::fprintf(stderr, "--cycle: expected 1 or more; --jitter: expected 0 <= J < 1\n");
    return 2;
  }
  const uint64_t regions = size / kRegion;
  const uint64_t every = std::max<uint64_t>(1, static_cast<uint64_t>(1 / hotFraction + 0.5));
  auto* raw = static_cast<char*>(mmap(nullptr, size + kRegion, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0));
  if (raw == MAP_FAILED) {
    std::perror("mmap");
    return 1;
  }
  auto* base = reinterpret_cast<volatile char*>((reinterpret_cast<uintptr_t>(raw) + kRegion - 1) & ~(kRegion - 1));
  madvise(const_cast<char*>(base), size, thp ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
  if (startNode >= 0) {
    unsigned long mask[16] = {};
    mask[startNode / 64] = 1ul << (startNode % 64);
    if (startNode >= 1024 || mbind(const_cast<char*>(base), size, MPOL_BIND, mask, 1024, 0) != 0) {
      std::perror("mbind --start-node");
      return 1;
    }
  }
  for (uint64_t off = 0; off < size; off += kPage) {  // everything resident, with its check word
    base[off] = 1;
    *reinterpret_cast<volatile uint64_t*>(base + off + kCheckOffset) = checkWord(off / kPage);
  }
  if (startNode >= 0 && mbind(const_cast<char*>(base), size, MPOL_DEFAULT, nullptr, 0, 0) != 0) {
    std::perror("mbind MPOL_DEFAULT");
    return 1;
  }

  signal(SIGTERM, onSignal);
  signal(SIGINT, onSignal);
  FILE* t = truth.empty() ? nullptr : std::fopen(truth.c_str(), "w");
  if (!ready.empty()) {
    FILE* f = std::fopen((ready + ".tmp").c_str(), "w");
    std::fprintf(f, "pid=%d base=%#" PRIxPTR " size=%" PRIu64 "\n", getpid(), reinterpret_cast<uintptr_t>(base), size);
    std::fclose(f);
    std::rename((ready + ".tmp").c_str(), ready.c_str());
  }
  std::vector<uint64_t> hotSet;
  uint64_t trickleAt = 0;
  volatile char sink = 0;
  for (int phase = 0; phase < phases && !gStop; ++phase) {
    hotSet.clear();
    const uint64_t window = std::max<uint64_t>(1, static_cast<uint64_t>(double(regions) * hotFraction + 0.5));
    // Which sliding window this phase uses, or -1: a random subset.
    int64_t slot = phase;
    if (pattern == "random") slot = -1;
    if (pattern == "cyclic") slot = phase % cycle;
    if (pattern == "recurring") slot = phase % 2 == 0 ? 0 : -1;
    for (uint64_t i = 0; i < regions; ++i)
      if (slot < 0 ? hot(i, phase, every) : (i + regions - (uint64_t(slot) * window) % regions) % regions < window) hotSet.push_back(i);
    const double start = now();
    if (t) {
      std::fprintf(t, "{\"phase\":%d,\"start\":%.6f,\"base\":%" PRIuPTR ",\"region_bytes\":%" PRIu64 ",\"hot\":[", phase, start,
                   reinterpret_cast<uintptr_t>(base), kRegion);
      for (size_t k = 0; k < hotSet.size(); ++k) std::fprintf(t, "%s%" PRIu64, k ? "," : "", hotSet[k]);
      std::fprintf(t, "]}\n");
      std::fflush(t);
    }
    const uint64_t pages = size / kPage;
    const auto trickleReads = static_cast<uint64_t>(trickle * double(hotSet.size() * (kRegion / kPage)) + 0.5);
    const double length = phaseLength(phaseSeconds, jitter, phase);
    while (!gStop && now() - start < length) {
      for (uint64_t i : hotSet)
        for (uint64_t off = 0; off < kRegion; off += kPage) base[i * kRegion + off] = static_cast<char>(base[i * kRegion + off] + 1);
      for (uint64_t k = 0; k < trickleReads; ++k, trickleAt = (trickleAt + 1) % pages)
        sink = static_cast<char>(sink + base[trickleAt * kPage + kCheckOffset]);
    }
  }
  if (t) std::fclose(t);
  uint64_t wrong = 0;
  for (uint64_t off = 0; off < size; off += kPage)
    if (*reinterpret_cast<volatile uint64_t*>(base + off + kCheckOffset) != checkWord(off / kPage)) ++wrong;
  std::printf("wrong_pages=%" PRIu64 " of %" PRIu64 "\n", wrong, size / kPage);
  return wrong == 0 ? 0 : 1;
}
