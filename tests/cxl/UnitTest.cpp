// The pieces under the collectives: the non-coherence simulation, the layout, reductions,
// settings, the threads that share copies, and how a communicator counts the CPUs of its host.

#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <set>
#include <thread>
#include <vector>

#include "Comm.h"
#include "CopyCrew.h"
#include "DeltaAuto.h"
#include "Layout.h"
#include "Options.h"
#include "Ranks.h"
#include "Reduce.h"
#include "RegionView.h"

using namespace cxlccl;

TEST_CASE("the simulation shows a rank only what was published and refreshed", "[cxl]") {
  std::vector<std::uint64_t> pool(1024, 0);  // the shared memory, 8 KiB
  auto* shared = reinterpret_cast<std::byte*>(pool.data());
  RegionView writer(shared, 8192, Coherence::simulate);
  RegionView reader(shared, 8192, Coherence::simulate);

  writer.poke(0, 42);
  CHECK(reader.load(0) == 0);  // written, not published: memory still has 0
  writer.publish(0, 8);
  CHECK(reader.peek(0) == 0);  // published, not refreshed: the reader's stale copy
  reader.refresh(0, 8);
  CHECK(reader.peek(0) == 42);

  // Two ranks writing one 64-byte line: the later publish writes back the whole line, its stale
  // copy of the other rank's word included, as a cache-line write-back would.
  writer.poke(64, 1);
  reader.poke(72, 2);
  writer.publish(64, 8);
  reader.publish(72, 8);
  RegionView third(shared, 8192, Coherence::simulate);
  CHECK(third.peek(72) == 2);
  CHECK(third.peek(64) == 0);  // lost: the single-writer-per-line rule exists for this
}

TEST_CASE("hardware and flush views read and write the memory itself", "[cxl]") {
  std::vector<std::uint64_t> pool(512, 0);
  auto* shared = reinterpret_cast<std::byte*>(pool.data());
  for (Coherence mode : {Coherence::hardware, Coherence::flush}) {
    RegionView a(shared, 4096, mode), b(shared, 4096, mode);
    a.store(128, 7);
    CHECK(b.load(128) == 7);
    CHECK(pool[16] == 7);
  }
}

TEST_CASE("every flag of the layout has a line of its own", "[cxl]") {
  for (int n : {1, 2, 5, 8}) {
    Layout layout(LayoutParams{n, 64, 16384, 4});
    std::set<std::size_t> lines;
    std::size_t count = 0;
    auto add = [&](std::size_t offset) {
      CHECK(offset % 64 == 0);
      CHECK(offset < layout.controlBytes());
      lines.insert(offset);
      ++count;
    };
    add(layout.header());
    for (int a = 0; a < n; ++a) {
      add(layout.rankLine(a));
      add(layout.doorbell(a));
      for (int h = 0; h < layout.ringHeaders(); ++h) add(layout.slotHeader(a, h));
      for (int b = 0; b < n; ++b) {
        add(layout.ack(a, b));
        add(layout.p2pDoorbell(a, b));
        add(layout.p2pAck(a, b));
        for (int h = 0; h < kP2pHeaders; ++h) add(layout.p2pSlotHeader(a, b, h));
      }
    }
    CHECK(lines.size() == count);
    CHECK(layout.slot(0, 0) % 4096 == 0);
    CHECK(layout.p2pSlot(n - 1, n - 1, kP2pChunks - 1) + layout.p2pChunkBytes() <= layout.bytes());
  }
}

TEST_CASE("a send and recv ring shares half its writer's ring among the peers", "[cxl]") {
  auto pairBytes = [](int n) {
    Layout layout(LayoutParams{n, 128, 256 << 10, 8});
    CHECK(layout.p2pChunkBytes() % 4096 == 0);
    return layout.p2pChunkBytes() * kP2pChunks;
  };
  CHECK(pairBytes(2) == (1u << 20));
  CHECK(pairBytes(3) == (512u << 10));
  CHECK(pairBytes(5) == (256u << 10));
  CHECK(pairBytes(4) == 4 * (84u << 10));  // a third of 1 MiB in whole pages a slot
  // Never less than chunkBytes / 2 a pair, however many ranks share it.
  CHECK(pairBytes(9) == (128u << 10));
  CHECK(pairBytes(64) == (128u << 10));
  // A slot is whole lines even where chunkBytes / 8 is not: 20 KiB / 8 = 2.5 KiB, lines of 4 KiB.
  Layout wide(LayoutParams{64, 4096, 20 << 10, 8});
  CHECK(wide.p2pChunkBytes() == 4096);
}

TEST_CASE("chunks smaller than a slot move through it lap by lap and stay inside it", "[cxl]") {
  constexpr std::size_t slot = 256 << 10;
  constexpr int slots = 8;
  // 64 KiB chunks: four places a slot, one lap of the ring at each.
  for (std::uint64_t seq = 1; seq <= 8; ++seq) CHECK(chunkOffsetInSlot(slot, slots, seq, 64 << 10) == 0);
  for (std::uint64_t seq = 9; seq <= 16; ++seq) CHECK(chunkOffsetInSlot(slot, slots, seq, 64 << 10) == (64u << 10));
  CHECK(chunkOffsetInSlot(slot, slots, 25, 64 << 10) == (192u << 10));
  CHECK(chunkOffsetInSlot(slot, slots, 33, 64 << 10) == 0);
  // A whole slot, or more than half of one, always starts it.
  for (std::uint64_t seq = 1; seq <= 40; ++seq) {
    CHECK(chunkOffsetInSlot(slot, slots, seq, slot) == 0);
    CHECK(chunkOffsetInSlot(slot, slots, seq, (128 << 10) + 1) == 0);
  }
  // Any size: 4 KiB-aligned, inside the slot, and every place used.
  for (std::size_t bytes : {std::size_t{1}, std::size_t{100}, std::size_t{4097}, std::size_t{100} << 10, std::size_t{84} << 10}) {
    std::set<std::size_t> places;
    for (std::uint64_t seq = 1; seq <= 2000; ++seq) {
      std::size_t at = chunkOffsetInSlot(slot, slots, seq, bytes);
      CHECK(at % 4096 == 0);
      CHECK(at + bytes <= slot);
      places.insert(at);
    }
    CHECK(places.size() == slot / ((bytes + 4095) / 4096 * 4096));
  }
}

TEST_CASE("reductions of half and bfloat16 round to nearest even", "[cxl]") {
  _Float16 a[2] = {static_cast<_Float16>(1.0f), static_cast<_Float16>(2048.0f)};
  _Float16 b[2] = {static_cast<_Float16>(0.5f), static_cast<_Float16>(1.0f)};
  reduce(a, a, b, 2, cxlcclFloat16, cxlcclSum);
  CHECK(static_cast<float>(a[0]) == 1.5f);
  CHECK(static_cast<float>(a[1]) == 2048.0f);  // 2049 is not a half: ties to even
  std::uint16_t x[1] = {0x3f80};               // 1.0 in bfloat16
  std::uint16_t y[1] = {0x3b80};               // 2^-8: 1 + 2^-8 lies halfway, rounds to 1.0 (even)
  reduce(x, x, y, 1, cxlcclBfloat16, cxlcclSum);
  CHECK(x[0] == 0x3f80);
  std::int8_t i[1] = {127}, j[1] = {1};
  reduce(i, i, j, 1, cxlcclInt8, cxlcclSum);
  CHECK(i[0] == -128);  // integers wrap
  double m[2] = {1, -3}, n[2] = {2, -4};
  reduce(m, m, n, 2, cxlcclFloat64, cxlcclMin);
  CHECK(m[0] == 1);
  CHECK(m[1] == -4);
}

TEST_CASE("a reduction into a third buffer leaves both inputs as they were", "[cxl]") {
  std::vector<std::int32_t> a(1001), b(1001), out(1001, -1);
  for (int k = 0; k < 1001; ++k) {
    a[k] = k;
    b[k] = 3 * k - 1500;
  }
  const auto a0 = a, b0 = b;
  reduce(out.data(), a.data(), b.data(), a.size(), cxlcclInt32, cxlcclMax);
  CHECK(a == a0);
  CHECK(b == b0);
  for (int k = 0; k < 1001; ++k) {
    INFO("element " << k);
    REQUIRE(out[k] == std::max(k, 3 * k - 1500));
  }
}

TEST_CASE("settings come from the config, else the environment, and are checked", "[cxl]") {
  Options options;
  REQUIRE(resolveOptions(nullptr, &options).ok());
  CHECK(options.timeoutMs == 30000);
  CHECK(options.layout.chunkBytes == 256u << 10);
  CHECK(!options.coherence.has_value());

  setenv("CXLCCL_CHUNK_BYTES", "64K", 1);
  setenv("CXLCCL_COHERENCE", "simulate", 1);
  cxlcclConfig_t config = CXLCCL_CONFIG_INITIALIZER;
  config.timeoutMs = 1234;
  REQUIRE(resolveOptions(&config, &options).ok());
  CHECK(options.layout.chunkBytes == 64u << 10);
  CHECK(options.coherence == Coherence::simulate);
  CHECK(options.timeoutMs == 1234);

  setenv("CXLCCL_CHUNK_BYTES", "3x", 1);
  Status bad = resolveOptions(nullptr, &options);
  CHECK(bad.code == cxlcclInvalidArgument);
  CHECK(bad.message == "CXLCCL_CHUNK_BYTES=3x: expected a size such as 256K");
  unsetenv("CXLCCL_CHUNK_BYTES");
  unsetenv("CXLCCL_COHERENCE");

  config.lineBytes = 96;
  CHECK(resolveOptions(&config, &options).message == "lineBytes = 96: expected a power of two in 64..4096");
  config.lineBytes = CXLCCL_CONFIG_UNDEF_INT;

  CHECK(options.delta == DeltaMode::off);
  setenv("CXLCCL_DELTA", "auto", 1);
  REQUIRE(resolveOptions(&config, &options).ok());
  CHECK(options.delta == DeltaMode::automatic);
  config.delta = cxlcclDeltaOn;  // the config wins
  REQUIRE(resolveOptions(&config, &options).ok());
  CHECK(options.delta == DeltaMode::on);
  config.delta = 7;
  CHECK(resolveOptions(&config, &options).message == "config.delta = 7: expected a cxlcclDelta_t (0..2)");
  config.delta = CXLCCL_CONFIG_UNDEF_INT;
  config.coherence = 9;
  CHECK(resolveOptions(&config, &options).message == "config.coherence = 9: expected a cxlcclCoherence_t (0..3)");
  config.coherence = CXLCCL_CONFIG_UNDEF_INT;
  setenv("CXLCCL_COHERENCE", "cached", 1);
  CHECK(resolveOptions(&config, &options).message == "CXLCCL_COHERENCE=cached: expected pool, hardware, flush or simulate");
  setenv("CXLCCL_COHERENCE", "FLUSH", 1);
  REQUIRE(resolveOptions(&config, &options).ok());
  CHECK(options.coherence == Coherence::flush);
  unsetenv("CXLCCL_COHERENCE");
  setenv("CXLCCL_DELTA", "sometimes", 1);
  CHECK(resolveOptions(&config, &options).message == "CXLCCL_DELTA=sometimes: expected off, on or auto");
  unsetenv("CXLCCL_DELTA");
  REQUIRE(resolveOptions(&config, &options).ok());
  CHECK(options.deltaTimed);
  setenv("CXLCCL_DELTA_TIMED", "0", 1);
  REQUIRE(resolveOptions(&config, &options).ok());
  CHECK_FALSE(options.deltaTimed);
  setenv("CXLCCL_DELTA_TIMED", "2", 1);
  CHECK(resolveOptions(&config, &options).message == "CXLCCL_DELTA_TIMED = 2: expected 0..1");
  unsetenv("CXLCCL_DELTA_TIMED");

  config.magic = 0;
  CHECK(resolveOptions(&config, &options).code == cxlcclInvalidArgument);
}

TEST_CASE("copies shared between threads land whole and exact", "[cxl]") {
  CopyCrew crew(4);
  REQUIRE(crew.threads() == 4);
  std::vector<unsigned char> src(3u << 20), dst(src.size() + 64);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<unsigned char>(i * 7 + i / 4096);
  // Sizes below, at and above the split, odd ones, misaligned ends; many in a row, as a
  // pipeline posts them (a helper that read a stale job would leave a hole or double-count).
  const std::size_t sizes[] = {1, 4095, CopyCrew::kMinPart, 2 * CopyCrew::kMinPart + 3, 1000003, 3u << 20};
  for (int round = 0; round < 200; ++round) {
    std::size_t n = sizes[static_cast<std::size_t>(round) % 6];
    std::size_t shift = static_cast<std::size_t>(round) % 3 == 0 ? 0 : static_cast<std::size_t>(round) % 61;
    if (n + shift > dst.size()) shift = 0;
    std::memset(dst.data(), 0, dst.size());
    crew.copy(dst.data() + shift, src.data(), n, round % 2 == 1);
    INFO("round " << round << ", " << n << " bytes at +" << shift);
    REQUIRE(std::memcmp(dst.data() + shift, src.data(), n) == 0);
    REQUIRE(std::all_of(dst.begin(), dst.begin() + static_cast<std::ptrdiff_t>(shift), [](unsigned char c) { return c == 0; }));
    REQUIRE(std::all_of(dst.begin() + static_cast<std::ptrdiff_t>(shift + n), dst.end(), [](unsigned char c) { return c == 0; }));
  }
}

// A unique id for a communicator in the pool CXLCCL_POOL names, as the library holds it.
static UniqueIdData newUniqueId() {
  cxlcclUniqueId uid;
  REQUIRE(cxlcclGetUniqueId(&uid) == cxlcclSuccess);
  UniqueIdData id;
  std::memcpy(&id, &uid, sizeof id);
  return id;
}

// The CPUs this process may use, in order.
static std::vector<int> allowedCpus() {
  cpu_set_t allowed;
  REQUIRE(sched_getaffinity(0, sizeof allowed, &allowed) == 0);
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &allowed)) cpus.push_back(cpu);
  return cpus;
}

// Binds the calling process to `cpu` alone.
static bool bindTo(int cpu) {
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  return sched_setaffinity(0, sizeof one, &one) == 0;
}

// 2 ranks bound to CPUs `cpuOf(rank)`: 1 when a rank's communicator counts itself oversubscribed
// (waiting then yields at once), 0 when not, 2 on a failure.
static std::vector<int> oversubscribedWhenBound(const std::function<int(int)>& cpuOf) {
  test::TempPool pool;
  const UniqueIdData id = newUniqueId();
  // Both ranks stay until both have counted: a peer that is gone cannot show its CPUs.
  void* shared = mmap(nullptr, sizeof(std::atomic<int>), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  REQUIRE(shared != MAP_FAILED);
  auto* counted = new (shared) std::atomic<int>(0);
  std::vector<int> result = test::runRanks(
      2,
      [&](int rank) {
        Options options;
        std::unique_ptr<Comm> comm;
        if (!bindTo(cpuOf(rank)) || !resolveOptions(nullptr, &options).ok() || !Comm::init(2, rank, id, options, &comm).ok()) return 2;
        counted->fetch_add(1);
        while (counted->load() < 2) sched_yield();
        return comm->oversubscribed() ? 1 : 0;
      },
      60);
  munmap(shared, sizeof(std::atomic<int>));
  return result;
}

TEST_CASE("ranks bound to a core each are not oversubscribed and two bound to one core are", "[cxl]") {
  const std::vector<int> cpus = allowedCpus();
  if (cpus.size() < 2) {
    WARN("skipped: this process may use " << cpus.size() << " CPU");
    return;
  }
  // As mpirun binds 2 ranks: each alone on its CPU, though each may use one only.
  CHECK(oversubscribedWhenBound([&](int rank) { return cpus[static_cast<std::size_t>(rank)]; }) == std::vector<int>{0, 0});
  CHECK(oversubscribedWhenBound([&](int) { return cpus[0]; }) == std::vector<int>{1, 1});
}

// The pages of `bytes` at `at` that this process's page table does not map (/proc/self/pagemap,
// bit 63 clear), or -1 when it cannot be read.
static long unmappedPages(const std::byte* at, std::size_t bytes) {
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  const std::size_t first = reinterpret_cast<std::uintptr_t>(at) / page;
  const std::size_t count = (reinterpret_cast<std::uintptr_t>(at) + bytes + page - 1) / page - first;
  const int fd = open("/proc/self/pagemap", O_RDONLY);
  if (fd < 0) return -1;
  std::vector<std::uint64_t> entries(count);
  const auto want = static_cast<ssize_t>(count * sizeof(std::uint64_t));
  const bool read = pread(fd, entries.data(), static_cast<std::size_t>(want), static_cast<off_t>(first * sizeof(std::uint64_t))) == want;
  close(fd);
  if (!read) return -1;
  return static_cast<long>(std::count_if(entries.begin(), entries.end(), [](std::uint64_t e) { return (e >> 63) == 0; }));
}

// Init returns in a rank once every rank has joined, so a fast rank may leave before a slow one
// has looked at it. Both ranks share a CPU and the slow one is SCHED_IDLE: when the fast one wakes
// up to look, it runs until it has left (ctest runs it alone: a busy test beside it would starve
// the slow rank too). Each round's exit codes: 0 joined, 4 init failed because
// the peer aborted, 2 any other failure (a timeout among them).
static std::vector<int> initThenLeave(bool abort, int rounds) {
  const int cpu = allowedCpus().front();
  std::vector<int> codes;
  for (int round = 0; round < rounds; ++round) {
    test::TempPool pool;
    const UniqueIdData id = newUniqueId();
    std::vector<int> result = test::runRanks(
        2,
        [&](int rank) {
          sched_param idle{};
          if (!bindTo(cpu)) return 3;
          if (rank == 1 && sched_setscheduler(0, SCHED_IDLE, &idle) != 0) return 3;
          Options options;
          std::unique_ptr<Comm> comm;
          if (!resolveOptions(nullptr, &options).ok()) return 3;
          options.timeoutMs = 10000;
          Status status = Comm::init(2, rank, id, options, &comm);
          if (!status.ok()) {
            std::fprintf(stderr, "rank %d: %s\n", rank, status.message.c_str());
            return status.message.find("aborted") != std::string::npos ? 4 : 2;
          }
          return (abort ? comm->abort() : comm->destroy()).ok() ? 0 : 1;
        },
        60);
    codes.insert(codes.end(), result.begin(), result.end());
  }
  return codes;
}

// A peer that left has joined (the slow rank used to wait out the timeout); one that aborted
// fails the slow rank's init at once.
TEST_CASE("a rank that leaves its communicator as soon as init returns does not hold up a slower peer's init", "[cxl][serial]") {
  std::vector<int> destroyed = initThenLeave(false, 10);
  CHECK(destroyed == std::vector<int>(destroyed.size(), 0));
  std::vector<int> aborted = initThenLeave(true, 10);
  CHECK(std::all_of(aborted.begin(), aborted.end(), [](int code) { return code == 0 || code == 4; }));
}

// A fresh pool's ring pages do not exist until touched: init maps every page of the region in
// each rank, so that no call pays a fault (or, in a VM, an exit) for its first lap of the ring.
TEST_CASE("a communicator's whole region is mapped in every rank when init returns", "[cxl]") {
  test::TempPool pool;
  const UniqueIdData id = newUniqueId();
  std::vector<int> result = test::runRanks(
      2,
      [&](int rank) {
        Options options;
        std::unique_ptr<Comm> comm;
        if (!resolveOptions(nullptr, &options).ok() || !Comm::init(2, rank, id, options, &comm).ok()) return 2;
        const long unmapped = unmappedPages(comm->view().at(0), comm->layout().bytes());
        if (unmapped != 0) std::fprintf(stderr, "rank %d: %ld pages of the region not mapped (-1: pagemap unreadable)\n", rank, unmapped);
        if (!comm->destroy().ok()) return 3;
        return unmapped == 0 ? 0 : 1;
      },
      60);
  CHECK(result == std::vector<int>{0, 0});
}

// A Gather root whose call failed waits, before it returns, for the peers still writing their
// blocks into its buffer in that call (their rank lines' `writing`): until a writer clears it,
// or exits, or the limit passes -- and not for a writer in another call.
TEST_CASE("a rank whose call failed waits for peers still writing into it, until they stop, exit or the limit passes", "[cxl]") {
  test::TempPool pool;
  const UniqueIdData id = newUniqueId();
  // Steps the ranks take in turn: rank 1 writing in call 7 (1), about to stop (2), writing in
  // call 9 (3), rank 0 done with it (4), rank 1 writing in call 11 (5) and then exiting.
  void* shared = mmap(nullptr, sizeof(std::atomic<int>), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  REQUIRE(shared != MAP_FAILED);
  auto* step = new (shared) std::atomic<int>(0);
  auto awaitStep = [&](int n) {
    while (step->load() < n) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  };
  std::vector<int> result = test::runRanks(
      2,
      [&](int rank) {
        Options options;
        std::unique_ptr<Comm> comm;
        if (!resolveOptions(nullptr, &options).ok() || !Comm::init(2, rank, id, options, &comm).ok()) return 2;
        if (!comm->linesHoldWriting()) return 3;
        if (rank == 1) {
          comm->setWriting(7);
          step->store(1);
          std::this_thread::sleep_for(std::chrono::milliseconds(200));
          step->store(2);
          comm->setWriting(0);
          comm->setWriting(9);
          step->store(3);
          awaitStep(4);
          comm->setWriting(11);
          step->store(5);
          return 0;  // exits while writing in call 11
        }
        awaitStep(1);
        comm->awaitWriters(8, std::chrono::milliseconds(60000));  // another call's: at once
        if (step->load() != 1) return 4;
        comm->awaitWriters(7, std::chrono::milliseconds(60000));
        if (step->load() < 2) return 5;  // returned while rank 1 still wrote
        awaitStep(3);
        comm->awaitWriters(9, std::chrono::milliseconds(100));  // rank 1 stays: the limit ends it
        step->store(4);
        awaitStep(5);
        comm->awaitWriters(11, std::chrono::milliseconds(120000));  // ends when rank 1 has exited
        return 0;
      },
      60);
  munmap(shared, sizeof(std::atomic<int>));
  CHECK(result == std::vector<int>{0, 0});
}

// delta publish's auto on given times: lines slower than the ring by more than 15% turn to the
// ring, faster stay; the first ring call after the mirror is no sample; a share over 5% turns to
// the ring whatever the times; untimed, only the share counts; after 256 calls as lines the ring
// is timed again.
TEST_CASE("delta publish's auto turns to the ring where lines take longer", "[cxl]") {
  using cxlccl::AutoStep;
  using cxlccl::AutoTiming;
  using cxlccl::DeltaSend;
  AutoTiming slow;
  slow.after(DeltaSend::full, 9.0, 0, true);
  CHECK(slow.after(DeltaSend::lines, 2.0, 0.01, true) == AutoStep::timeRing);  // no ring time yet
  slow.after(DeltaSend::ring, 50.0, 0, true);                                  // the switch: not a sample
  CHECK(slow.ringSeconds == 0);
  slow.after(DeltaSend::ring, 1.0, 0, true);
  slow.after(DeltaSend::ring, 1.0, 0, true);
  CHECK(slow.ringSeconds == 1.0);
  slow.after(DeltaSend::full, 3.0, 0, true);
  CHECK(slow.after(DeltaSend::lines, 2.0, 0.01, true) == AutoStep::backOff);

  AutoTiming fast;
  fast.after(DeltaSend::lines, 1.0, 0.001, true);
  fast.after(DeltaSend::ring, 2.0, 0, true);
  fast.after(DeltaSend::ring, 2.0, 0, true);
  CHECK(fast.after(DeltaSend::lines, 1.1, 0.001, true) == AutoStep::stay);
  CHECK(fast.after(DeltaSend::lines, 1.1, 0.2, true) == AutoStep::backOff);  // most lines changed
  // Within the margin: 2.2 s against 2 s stays.
  AutoTiming close;
  close.after(DeltaSend::ring, 2.0, 0, true);
  close.after(DeltaSend::ring, 2.0, 0, true);
  close.after(DeltaSend::lines, 2.2, 0.001, true);
  CHECK(close.after(DeltaSend::lines, 2.2, 0.001, true) == AutoStep::stay);

  AutoTiming untimed;
  untimed.after(DeltaSend::ring, 1.0, 0, false);
  untimed.after(DeltaSend::ring, 1.0, 0, false);
  CHECK(untimed.after(DeltaSend::lines, 5.0, 0.01, false) == AutoStep::stay);
  CHECK(untimed.after(DeltaSend::lines, 5.0, 0.5, false) == AutoStep::backOff);

  int retimed = 0;
  for (int call = 0; call < 2 * AutoTiming::kRetimeCalls; ++call)
    if (fast.after(DeltaSend::lines, 1.0, 0.001, true) == AutoStep::timeRing) ++retimed;
  CHECK(retimed == 2);
}
