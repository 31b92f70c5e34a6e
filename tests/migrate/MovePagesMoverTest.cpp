#include <catch2/catch.hpp>

#include <unistd.h>

#include <sys/mman.h>

#include <filesystem>

#include "FakeKernel.h"
#include "Run.h"
#include "mtm/migrate/MovePagesMover.h"

using namespace mtm;
using namespace mtm::migrate;

namespace {

constexpr uint64_t kBase = 0x7f0000000000;
constexpr uint64_t kMiB = 1 << 20;
constexpr int kPid = 4242;

// A process whose smaps shows one anonymous VMA [kBase, kBase + bytes).
struct Setup {
  test::TempDir root;
  test::FakeKernel kernel;
  test::FakeClock clock;
  KernelFs fs{root.path()};
  MoverOptions options;

  explicit Setup(uint64_t vmaBytes = 64 * kMiB) {
    char line[160];
    std::snprintf(line, sizeof line, "%lx-%lx rw-p 00000000 00:00 0 \nRss: 4 kB\nAnonHugePages: 4096 kB\nKernelPageSize: 4 kB\n",
                  static_cast<unsigned long>(kBase), static_cast<unsigned long>(kBase + vmaBytes));
    root.write("proc/" + std::to_string(kPid) + "/smaps", line);
    kernel.clock = &clock;
  }
  std::function<bool(int)> cancelled;
  MoveStats move(std::vector<MoveRequest> requests, const Mover::ProgressFn& progress = {}) {
    MovePagesMover mover({{kernel, kernel, fs, clock}, options, cancelled});
    return mover.execute(requests, progress);
  }
};

MoveRequest request(uint64_t offset, uint64_t bytes, int node, std::vector<int> fallback = {}) {
  MoveRequest r;
  r.pid = kPid;
  r.ranges = {{kBase + offset, kBase + offset + bytes}};
  r.toNode = node;
  r.fallbackNodes = std::move(fallback);
  return r;
}

uint64_t failed(const MoveStats& s, int err) {
  auto it = s.failed.find(err);
  return it == s.failed.end() ? 0 : it->second;
}

}  // namespace

TEST_CASE("every page moves, in batches of batch_pages addresses", "[mover]") {
  Setup s;
  s.kernel.map(kBase, 100 * 4096, 0);
  s.options.batchPages = 32;
  auto st = s.move({request(0, 100 * 4096, 2)});
  CHECK(st.pagesRequested == 100);
  CHECK(st.pagesMoved == 100);
  CHECK(st.pagesFailed() == 0);
  CHECK(st.calls == 4);
  REQUIRE(s.kernel.calls.size() == 4);
  CHECK(s.kernel.calls[0].count == 32);
  CHECK(s.kernel.calls[3].count == 4);
  for (uint64_t a = kBase; a < kBase + 100 * 4096; a += 4096) CHECK(s.kernel.nodeOf(a) == 2);
  CHECK(st.errors.empty());
}

TEST_CASE("a THP is passed with one address and moves whole", "[mover][thp]") {
  Setup s;
  s.kernel.mapThp(kBase, 0);
  s.kernel.mapThp(kBase + 2 * kMiB, 0);
  s.kernel.map(kBase + 4 * kMiB, 10 * 4096, 0);
  auto st = s.move({request(0, 4 * kMiB + 10 * 4096, 3)});
  CHECK(st.pagesRequested == 2 * 512 + 10);
  CHECK(st.pagesMoved == 2 * 512 + 10);
  CHECK(st.thpMovedWhole == 2);
  REQUIRE(s.kernel.calls.size() == 1);
  CHECK(s.kernel.calls[0].count == 12);
  CHECK(failed(st, EBUSY) == 0);
  CHECK(s.kernel.nodeOf(kBase + 2 * kMiB + 4096 * 100) == 3);
}

TEST_CASE("a range that covers part of a THP moves it whole, or splits it when asked", "[mover][thp]") {
  SECTION("whole") {
    Setup s;
    s.kernel.mapThp(kBase, 0);
    auto st = s.move({request(kMiB, 4096, 1)});
    CHECK(st.pagesMoved == 512);
    CHECK(st.thpMovedWhole == 1);
    CHECK(s.kernel.nodeOf(kBase) == 1);
  }
  SECTION("split, then only the covered pages move") {
    Setup s;
    s.kernel.mapThp(kBase, 0);
    auto req = request(kMiB, kMiB, 1);
    req.splitPartialThps = true;
    auto st = s.move({req});
    CHECK(st.thpSplit == 1);
    CHECK(st.thpMovedWhole == 0);
    CHECK(st.pagesMoved == 256);
    REQUIRE(s.kernel.madvised.size() == 1);
    CHECK(s.kernel.madvised[0] == std::make_pair(kBase, MADV_COLD));
    CHECK(s.kernel.nodeOf(kBase) == 0);
    CHECK(s.kernel.nodeOf(kBase + kMiB) == 1);
  }
  SECTION("a THP the kernel will not split moves whole") {
    Setup s;
    s.kernel.mapThp(kBase, 0);
    s.kernel.splitRefused.insert(kBase);
    auto req = request(kMiB, kMiB, 1);
    req.splitPartialThps = true;
    auto st = s.move({req});
    CHECK(st.thpSplit == 0);
    CHECK(st.thpMovedWhole == 1);
    CHECK(st.pagesMoved == 512);
  }
}

TEST_CASE("busy pages are retried, a bounded number of times", "[mover]") {
  Setup s;
  s.kernel.map(kBase, 10 * 4096, 0);
  s.kernel.busyTries[kBase] = 2;           // moves on the third pass
  s.kernel.busyTries[kBase + 4096] = 100;  // never moves
  s.options.retries = 3;
  auto st = s.move({request(0, 10 * 4096, 1)});
  CHECK(st.pagesMoved == 9);
  CHECK(failed(st, EBUSY) == 1);
  CHECK(st.retries == 2 + 2 + 1);  // passes 2 and 3: both pages; pass 4: the stubborn one
  CHECK(s.kernel.nodeOf(kBase) == 1);
  CHECK(s.kernel.nodeOf(kBase + 4096) == 0);
  CHECK(s.kernel.calls.size() == 4);
}

TEST_CASE("per-page errors are counted by reason", "[mover]") {
  Setup s;
  s.kernel.map(kBase, 6 * 4096, 0);  // pages 6..7 of the range are not populated
  s.kernel.shared.insert(kBase + 4096);
  auto st = s.move({request(0, 8 * 4096, 2)});
  CHECK(st.pagesRequested == 8);
  CHECK(st.pagesMoved == 5);
  CHECK(failed(st, EACCES) == 1);
  CHECK(failed(st, EFAULT) == 2);
  CHECK(st.pagesMoved + st.pagesFailed() == st.pagesRequested);
}

TEST_CASE("a range partly outside every VMA counts the rest as EFAULT -- wholly outside is an error", "[mover]") {
  Setup s(4 * 4096);
  s.kernel.map(kBase, 4 * 4096, 0);
  auto st = s.move({request(0, 8 * 4096, 1)});
  CHECK(st.pagesMoved == 4);
  CHECK(failed(st, EFAULT) == 4);
  auto none = s.move({request(1 << 30, 4096, 1)});
  CHECK(none.pagesMoved == 0);
  REQUIRE(none.errors.size() == 1);
  CHECK(none.errors[0] == "pid 4242: no page of the requested ranges is mapped");
}

TEST_CASE("a full destination falls back to the next node, as the request allows", "[mover][enomem]") {
  SECTION("with a fallback") {
    Setup s;
    s.kernel.map(kBase, 100 * 4096, 0);
    s.kernel.capacity[1] = 50;
    s.options.batchPages = 32;
    auto st = s.move({request(0, 100 * 4096, 1, {2})});
    CHECK(st.pagesMoved == 100);
    CHECK(st.pagesToFallback == 50);
    CHECK(failed(st, ENOMEM) == 0);
    uint64_t on1 = 0, on2 = 0;
    for (uint64_t a = kBase; a < kBase + 100 * 4096; a += 4096) (s.kernel.nodeOf(a) == 1 ? on1 : on2)++;
    CHECK(on1 == 50);
    CHECK(on2 == 50);
  }
  SECTION("without one") {
    Setup s;
    s.kernel.map(kBase, 100 * 4096, 0);
    s.kernel.capacity[1] = 50;
    auto st = s.move({request(0, 100 * 4096, 1)});
    CHECK(st.pagesMoved == 50);
    CHECK(failed(st, ENOMEM) == 50);
  }
}

TEST_CASE("each request says where most of its pages landed -- in the order given -- or that none holds half", "[mover]") {
  Setup s;
  s.kernel.map(kBase, 400 * 4096, 3);
  s.kernel.capacity[0] = 130;
  MoveRequest demote = request(300 * 4096, 100 * 4096, 3);  // already there: moved in place
  demote.kind = MoveKind::Demotion;
  auto promote = [](uint64_t offset, std::vector<int> fallback) {
    auto r = request(offset, 100 * 4096, 0, std::move(fallback));
    r.kind = MoveKind::Promotion;
    return r;
  };
  // Promotions run first: the first fills node 0 but for 30 pages; the second puts 30 there and
  // 70 on its fallback; the third finds node 0 full and has no fallback.
  auto st = s.move({demote, promote(0, {1}), promote(100 * 4096, {1}), promote(200 * 4096, {})});
  CHECK(st.landedNodes == std::vector<int>{3, 0, 1, -1});
  CHECK(st.pagesMoved == 300);
  // Stretch by stretch, in the order the requests ran: the second promotion's 30 pages on node 0
  // and 70 on node 1 are each under 2 MiB, so they form one stretch, on node 1 where more of it
  // lies; the third landed nowhere.
  const uint64_t p = 4096;
  CHECK(st.landings == std::vector<Landing>{{1, kBase, kBase + 100 * p, 0},
                                            {2, kBase + 100 * p, kBase + 200 * p, 1},
                                            {0, kBase + 300 * p, kBase + 400 * p, 3}});

  s.options.dryRun = true;
  CHECK(s.move({promote(0, {})}).landedNodes == std::vector<int>{-1});  // nothing moves in a dry run
}

TEST_CASE("a request that lands on two nodes says where each stretch went", "[mover]") {
  // 16 MiB promoted to node 0, which has room for 6 MiB: the rest goes to the fallback, node 1.
  Setup s;
  const uint64_t pages = 16 * kMiB / 4096;
  s.kernel.map(kBase, 16 * kMiB, 3);
  s.kernel.capacity[0] = 6 * kMiB / 4096;
  auto st = s.move({request(0, 16 * kMiB, 0, {1})});
  REQUIRE(st.pagesMoved == pages);
  CHECK(st.landings == std::vector<Landing>{{0, kBase, kBase + 6 * kMiB, 0}, {0, kBase + 6 * kMiB, kBase + 16 * kMiB, 1}});
  CHECK(st.landedNodes == std::vector<int>{1});

  // Pages left on a stay node form stretches too.
  Setup t;
  t.kernel.map(kBase, 4 * kMiB, 0);
  t.kernel.map(kBase + 4 * kMiB, 12 * kMiB, 3);
  MoveRequest r = request(0, 16 * kMiB, 1);
  r.stayNodes = {0};
  CHECK(t.move({r}).landings == std::vector<Landing>{{0, kBase, kBase + 4 * kMiB, 0}, {0, kBase + 4 * kMiB, kBase + 16 * kMiB, 1}});
}

TEST_CASE("pages the kernel finds not present form a stretch on no node", "[mover]") {
  // 8 MiB promoted from node 3; the kernel has no page in [2, 6) MiB (never touched).
  Setup s;
  s.kernel.map(kBase, 8 * kMiB, 3);
  for (uint64_t a = kBase + 2 * kMiB; a < kBase + 6 * kMiB; a += 4096) s.kernel.absent.insert(a);
  auto st = s.move({request(0, 8 * kMiB, 0)});
  CHECK(st.pagesMoved == 4 * kMiB / 4096);
  CHECK(failed(st, ENOENT) == 4 * kMiB / 4096);
  CHECK(st.landings == std::vector<Landing>{{0, kBase, kBase + 2 * kMiB, 0},
                                            {0, kBase + 2 * kMiB, kBase + 6 * kMiB, -1},
                                            {0, kBase + 6 * kMiB, kBase + 8 * kMiB, 0}});
}

TEST_CASE("a caller without permission gets one clear error and every page counted", "[mover]") {
  Setup s;
  s.kernel.map(kBase, 64 * 4096, 0);
  s.kernel.wholeCallErrno = EPERM;
  s.options.batchPages = 16;
  auto st = s.move({request(0, 64 * 4096, 1)});
  CHECK(st.pagesMoved == 0);
  CHECK(failed(st, EPERM) == 64);
  CHECK(s.kernel.calls.size() == 1);  // the request stops at the first refusal
  REQUIRE(st.errors.size() == 1);
  // Root is not told to run as root.
  CHECK(st.errors[0] == std::string("pid 4242: move_pages: Operation not permitted: ") +
                            (::geteuid() == 0 ? "refused although running as root" : "run as root or as the process's owner") +
                            " (moving another user's pages needs CAP_SYS_NICE)");
}

TEST_CASE("a process that exits mid-migration cancels the rest", "[mover]") {
  Setup s;
  s.kernel.map(kBase, 64 * 4096, 0);
  s.kernel.exitAfterCalls = 2;
  s.options.batchPages = 16;
  auto st = s.move({request(0, 64 * 4096, 1)});
  CHECK(st.pagesMoved == 32);
  CHECK(st.pagesCancelled == 32);
  REQUIRE(st.errors.size() == 1);
  CHECK(st.errors[0] == "pid 4242: the process exited during migration; 32 pages not attempted");
}

TEST_CASE("moves cancelled mid-request stop at the next batch -- their pages count as cancelled, not failed", "[mover]") {
  Setup s;
  s.kernel.map(kBase, 64 * 4096, 0);
  s.options.batchPages = 16;
  s.cancelled = [&](int pid) { return pid == kPid && s.kernel.calls.size() >= 2; };  // after two calls
  auto st = s.move({request(0, 64 * 4096, 1)});
  CHECK(s.kernel.calls.size() == 2);
  CHECK(st.pagesMoved == 32);
  CHECK(st.pagesCancelled == 32);
  CHECK(st.pagesFailed() == 0);
  CHECK(st.errors.empty());  // a cancellation is no error

  // A request cancelled before its turn is not even listed.
  Setup t;
  t.kernel.map(kBase, 64 * 4096, 0);
  t.cancelled = [](int pid) { return pid == kPid; };
  auto none = t.move({request(0, 64 * 4096, 1)});
  CHECK(t.kernel.calls.empty());
  CHECK(none.pagesRequested == 0);
}

TEST_CASE("many requests of one process read its VMAs and open its pidfd once, and close it at the end", "[mover]") {
  Setup s;
  s.kernel.map(kBase, 64 * 4096, 0);
  std::vector<MoveRequest> requests;
  for (int i = 0; i < 16; ++i) requests.push_back(request(uint64_t(i) * 4 * 4096, 4 * 4096, 1));
  // The smaps file goes after the first call: a second read of it would fail the rest.
  auto st = s.move(requests, [&](const Progress&) { std::filesystem::remove(s.root.path() + "/proc/" + std::to_string(kPid) + "/smaps"); });
  CHECK(st.pagesMoved == 64);
  CHECK(st.errors.empty());
  CHECK(s.kernel.pidfdsOpened == 1);
  CHECK(s.kernel.pidfdsOpen == 0);
}

TEST_CASE("requests that carry their process's pidfd are moved through it -- the mover opens and closes none", "[mover]") {
  Setup s;
  s.kernel.map(kBase, 64 * 4096, 0);
  s.kernel.mapThp(kBase + 2 * kMiB, 0);
  auto shared = std::make_shared<const UniqueFd>(::dup(0));  // the caller's pidfd; here any descriptor
  std::vector<MoveRequest> requests{request(0, 64 * 4096, 1), request(2 * kMiB + 4096, 4096, 1)};
  requests.back().splitPartialThps = true;  // a THP split goes through the pidfd
  for (auto& r : requests) r.pidfd = shared;
  auto st = s.move(requests);
  CHECK(st.errors.empty());
  CHECK(st.pagesMoved == 65);
  CHECK(s.kernel.pidfdsOpened == 0);
  CHECK(s.kernel.madvised.size() == 1);
  CHECK(shared->get() >= 0);  // still the caller's
}

TEST_CASE("a pid that does not exist is a clear error", "[mover]") {
  Setup s;
  MoveRequest r = request(0, 4096, 1);
  r.pid = test::FakeKernel::kDeadPid;
  auto st = s.move({r});
  REQUIRE(st.errors.size() == 1);
  CHECK(st.errors[0].find("pid 999999: read ") == 0);
  CHECK(st.errors[0].find("smaps: No such file or directory: no such process") != std::string::npos);
  CHECK(s.kernel.calls.empty());
}

TEST_CASE("promotions run ahead of demotions", "[mover]") {
  Setup s;
  s.kernel.map(kBase, 8 * 4096, 1);
  auto demote = request(0, 4 * 4096, 3);
  demote.kind = MoveKind::Demotion;
  auto promote = request(4 * 4096, 4 * 4096, 0);
  promote.kind = MoveKind::Promotion;
  s.move({demote, promote});
  REQUIRE(s.kernel.calls.size() == 2);
  CHECK(s.kernel.calls[0].node == 0);
  CHECK(s.kernel.calls[1].node == 3);
}

TEST_CASE("the page budget defers what does not fit", "[mover][budget]") {
  Setup s;
  s.kernel.mapThp(kBase, 0);
  s.kernel.map(kBase + 2 * kMiB, 100 * 4096, 0);
  s.options.maxPages = 40;
  auto st = s.move({request(2 * kMiB, 100 * 4096, 1)});
  CHECK(st.pagesMoved == 40);
  CHECK(st.pagesDeferred == 60);
  s.options.maxPages = 500;  // a THP (512 pages) does not fit: it is deferred whole
  auto thp = s.move({request(0, 2 * kMiB, 1)});
  CHECK(thp.pagesMoved == 0);
  CHECK(thp.pagesDeferred == 512);
}

TEST_CASE("the byte rate holds in both directions: never faster, not much slower", "[mover][budget]") {
  const uint64_t rate = 4 * kMiB;
  SECTION("a fast kernel is held to the rate") {
    Setup s;
    s.kernel.map(kBase, 64 * kMiB, 0);
    s.options.maxRateBytes = rate;
    s.options.batchPages = 256;
    auto st = s.move({request(0, 64 * kMiB, 1)});
    REQUIRE(st.pagesMoved == 16384);
    const double seconds = std::chrono::duration<double>(st.elapsed).count();
    const double burst = std::chrono::duration<double>(s.options.burst).count();
    CHECK(st.bytesPerSecond() <= rate * (1 + burst / seconds) * 1.001);  // never faster than allowed
    CHECK(st.bytesPerSecond() >= 0.9 * rate);                            // not much slower
  }
  SECTION("a kernel slower than the rate is not slowed further") {
    Setup s;
    s.kernel.map(kBase, 16 * kMiB, 0);
    s.kernel.pagesPerCallCost = 2'000'000;  // 2 ms a page: 2 MiB/s, half the rate
    s.options.maxRateBytes = rate;
    s.options.batchPages = 64;
    auto st = s.move({request(0, 16 * kMiB, 1)});
    const double kernelRate = 4096 / 0.002;
    CHECK(st.bytesPerSecond() >= 0.95 * kernelRate);
  }
  SECTION("the rate holds over many calls of one mover (mtmd's turns), not per call") {
    // 64 MiB in 8 calls of 8 MiB at 4 MiB/s: 16 s however it is cut, less one burst. A pacer
    // per call let each call's first 100 ms of bytes (0.4 MiB) go at once, and more as calls
    // shrink.
    Setup s;
    s.kernel.map(kBase, 64 * kMiB, 0);
    s.options.maxRateBytes = rate;
    s.options.batchPages = 256;
    MovePagesMover mover({{s.kernel, s.kernel, s.fs, s.clock}, s.options});
    const auto t0 = s.clock.now();
    uint64_t moved = 0;
    for (uint64_t k = 0; k < 8; ++k) moved += mover.execute({request(k * 8 * kMiB, 8 * kMiB, 1)}).pagesMoved;
    REQUIRE(moved == 16384);
    const double seconds = std::chrono::duration<double>(s.clock.now() - t0).count();
    const double burst = std::chrono::duration<double>(s.options.burst).count();
    CHECK(seconds >= 64.0 * kMiB / rate - burst - 0.001);
  }
  SECTION("threads share one rate (real clock: only the upper bound is asserted)") {
    Setup s;
    s.kernel.map(kBase, 16 * kMiB, 0);
    s.kernel.clock = nullptr;
    s.options.maxRateBytes = 64 * kMiB;
    s.options.threads = 4;
    s.options.batchPages = 128;
    SteadyClock real;
    MovePagesMover mover({{s.kernel, s.kernel, s.fs, real}, s.options});
    auto st = mover.execute({request(0, 16 * kMiB, 2)});
    CHECK(st.pagesMoved == 4096);
    const double seconds = std::chrono::duration<double>(st.elapsed).count();
    CHECK(st.bytesPerSecond() <= 64.0 * kMiB * (1 + 0.1 / seconds) * 1.01);
  }
}

TEST_CASE("worker threads move every page exactly once", "[mover]") {
  Setup s;
  s.kernel.map(kBase, 4000 * 4096, 0);
  s.options.threads = 4;
  s.options.batchPages = 100;
  auto st = s.move({request(0, 4000 * 4096, 3)});
  CHECK(st.pagesMoved == 4000);
  CHECK(st.calls == 40);
  for (uint64_t a = kBase; a < kBase + 4000 * 4096; a += 4096) REQUIRE(s.kernel.nodeOf(a) == 3);
}

TEST_CASE("dry run only queries where pages are", "[mover]") {
  Setup s;
  s.kernel.map(kBase, 10 * 4096, 0);
  s.kernel.map(kBase + 10 * 4096, 5 * 4096, 2);
  s.options.dryRun = true;
  auto st = s.move({request(0, 16 * 4096, 2)});
  CHECK(st.pagesMoved == 0);
  CHECK(st.pagesWouldMove == 10);
  CHECK(st.pagesAlreadyThere == 5);
  CHECK(failed(st, EFAULT) == 1);
  for (const auto& c : s.kernel.calls) CHECK(c.query);
  CHECK(s.kernel.nodeOf(kBase) == 0);
}

TEST_CASE("pages on a node the request names to stay are asked for and left where they are", "[mover]") {
  // A promotion to node 1 of a range that lies partly on node 0 (faster) and partly on node 3.
  Setup s;
  s.kernel.map(kBase, 10 * 4096, 0);
  s.kernel.map(kBase + 10 * 4096, 30 * 4096, 3);
  s.options.batchPages = 16;
  MoveRequest r = request(0, 40 * 4096, 1);
  r.stayNodes = {0};
  uint64_t lastDone = 0;
  auto st = s.move({r}, [&](const Progress& p) { lastDone = p.pagesDone; });
  CHECK(st.pagesRequested == 40);
  CHECK(st.pagesStayed == 10);
  CHECK(st.pagesMoved == 30);
  CHECK(lastDone == 40);
  CHECK(st.landedNodes == std::vector<int>{1});
  for (uint64_t i = 0; i < 40; ++i) CHECK(s.kernel.nodeOf(kBase + i * 4096) == (i < 10 ? 0 : 1));
  CHECK(st.calls == 3 + 2);  // three queries of 16 addresses, two moves of the 30 left
}

TEST_CASE("progress reaches the total", "[mover]") {
  Setup s;
  s.kernel.map(kBase, 50 * 4096, 0);
  s.options.batchPages = 10;
  std::vector<Progress> seen;
  s.move({request(0, 50 * 4096, 1)}, [&](const Progress& p) { seen.push_back(p); });
  REQUIRE(seen.size() == 5);
  for (size_t i = 1; i < seen.size(); ++i) CHECK(seen[i].pagesDone > seen[i - 1].pagesDone);
  CHECK(seen.back().pagesDone == 50);
  CHECK(seen.back().pagesTotal == 50);
}
