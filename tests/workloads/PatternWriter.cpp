// mtm-test-writer: a workload for migration tests. It maps SIZE bytes -- the first part
// THP-backed (MADV_HUGEPAGE, 2 MiB-aligned), the rest 4 KiB pages (MADV_NOHUGEPAGE) -- plus,
// with --hugetlb, that much hugetlb memory (MAP_HUGETLB, 2 MiB pages), and keeps rewriting every
// page with a pattern that encodes the page and a per-page generation. On SIGTERM/SIGINT it
// stops between pages, checks every byte and exits 0 only if none is wrong.
//
//   mtm-test-writer --size 256M --thp-fraction 0.5 [--hugetlb 16M] --ready /tmp/ready
//   ready file: "pid=123 thp=0x7f..-0x7f.. base=0x7f..-0x7f.. hugetlb=0x7f..-0x7f.. pages=65536"

#include <signal.h>
#include <sys/mman.h>
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

// SIGTERM and SIGINT are blocked and polled with sigpending(2) between runs of pages: a handler
// would not run under ThreadSanitizer, which holds a signal back until the thread calls into
// libc, and this loop does not.
bool stopRequested() {
  sigset_t pending;
  sigpending(&pending);
  return sigismember(&pending, SIGTERM) || sigismember(&pending, SIGINT);
}

constexpr uint64_t kPage = 4096, kThp = 2ull << 20;

uint64_t pattern(uint64_t page, uint64_t word, uint64_t gen) {
  return (page * 0x9E3779B97F4A7C15ull) ^ (word * 0xBF58476D1CE4E5B9ull) ^ (gen << 40);
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t size = 64ull << 20;
  double thpFraction = 0.5;
  uint64_t hugetlbBytes = 0;
  std::string ready;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--size"))
      size = sizeArg(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--hugetlb"))
      hugetlbBytes = sizeArg(argv[i + 1]) / kThp * kThp;
    else if (!std::strcmp(argv[i], "--thp-fraction"))
      thpFraction = std::atof(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--ready"))
      ready = argv[i + 1];
    else {
      std::fprintf(stderr, "usage: %s [--size 256M] [--thp-fraction 0.5] [--hugetlb 16M] [--ready FILE]\n", argv[0]);
      return 2;
    }
  }
  const uint64_t thpBytes = static_cast<uint64_t>(static_cast<double>(size) * thpFraction) / kThp * kThp;
  const uint64_t baseBytes = (size - thpBytes) / kPage * kPage;
  // Over-allocate by one THP so the THP part can start 2 MiB-aligned.
  auto* raw = static_cast<uint8_t*>(mmap(nullptr, thpBytes + baseBytes + kThp, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  if (raw == MAP_FAILED) {
    std::perror("mmap");
    return 1;
  }
  auto* thp = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(raw) + kThp - 1) & ~(kThp - 1));
  uint8_t* base = thp + thpBytes;
  if (thpBytes) madvise(thp, thpBytes, MADV_HUGEPAGE);
  if (baseBytes) madvise(base, baseBytes, MADV_NOHUGEPAGE);

  uint8_t* hugetlb = nullptr;
  if (hugetlbBytes) {
    void* h = mmap(nullptr, hugetlbBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
    if (h == MAP_FAILED) {
      std::perror("mmap MAP_HUGETLB (reserve pages in /proc/sys/vm/nr_hugepages)");
      return 1;
    }
    hugetlb = static_cast<uint8_t*>(h);
  }
  const uint64_t normalPages = (thpBytes + baseBytes) / kPage;
  const uint64_t pages = normalPages + hugetlbBytes / kPage;
  auto pageAddress = [&](uint64_t p) { return p < normalPages ? thp + p * kPage : hugetlb + (p - normalPages) * kPage; };
  std::vector<uint64_t> gen(pages, 0);
  auto writePage = [&](uint64_t p) {
    auto* words = reinterpret_cast<volatile uint64_t*>(pageAddress(p));
    const uint64_t g = gen[p] + 1;
    for (uint64_t w = 0; w < kPage / 8; ++w) words[w] = pattern(p, w, g);
    gen[p] = g;
  };
  for (uint64_t p = 0; p < pages; ++p) writePage(p);

  sigset_t stopSignals;
  sigemptyset(&stopSignals);
  sigaddset(&stopSignals, SIGTERM);
  sigaddset(&stopSignals, SIGINT);
  sigprocmask(SIG_BLOCK, &stopSignals, nullptr);

  if (!ready.empty()) {
    FILE* f = std::fopen((ready + ".tmp").c_str(), "w");
    std::fprintf(f,
                 "pid=%d thp=%#" PRIxPTR "-%#" PRIxPTR " base=%#" PRIxPTR "-%#" PRIxPTR " hugetlb=%#" PRIxPTR "-%#" PRIxPTR
                 " pages=%" PRIu64 "\n",
                 getpid(), reinterpret_cast<uintptr_t>(thp), reinterpret_cast<uintptr_t>(thp + thpBytes), reinterpret_cast<uintptr_t>(base),
                 reinterpret_cast<uintptr_t>(base + baseBytes), reinterpret_cast<uintptr_t>(hugetlb),
                 reinterpret_cast<uintptr_t>(hugetlb + hugetlbBytes), pages);
    std::fclose(f);
    std::rename((ready + ".tmp").c_str(), ready.c_str());
  }

  uint64_t passes = 0;
  for (bool stop = false; !stop;) {
    for (uint64_t p = 0; p < pages && !stop; ++p) {
      writePage(p);
      if (p % 256 == 255) stop = stopRequested();
    }
    stop = stop || stopRequested();
    ++passes;
  }

  uint64_t wrong = 0;
  for (uint64_t p = 0; p < pages; ++p) {
    const auto* words = reinterpret_cast<const uint64_t*>(pageAddress(p));
    for (uint64_t w = 0; w < kPage / 8; ++w)
      if (words[w] != pattern(p, w, gen[p])) ++wrong;
  }
  std::printf("verified bytes=%" PRIu64 " wrong_words=%" PRIu64 " passes=%" PRIu64 "\n", pages * kPage, wrong, passes);
  return wrong == 0 ? 0 : 1;
}
