// Same-host direct reads (DirectReads.h): under CXLCCL_DIRECT=on a rank reads its peers' chunks
// of AllGather, AllToAll, Broadcast, Scatter and grouped Send/Recv straight from their buffers,
// and writes its Gather block straight into the root's -- none of that data crosses the pool --
// and under off through the rings; chunks under DirectReads::kMinBytes always go through the
// rings; a read or write of a process that exited is an error that says so.

#include <sys/wait.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "DirectReads.h"
#include "Ranks.h"
#include "Run.h"
#include "Skip.h"

using namespace cxlccl::test;

namespace {

enum Call { kAllGather, kAllToAll, kBroadcast, kScatter, kGather, kCalls };  // Broadcast, Scatter, Gather: root 0

// Whether rank `rank` of 2 receives a block in `call` (a rank's own block is copied inside it).
bool receives(int call, int rank) { return call == kAllGather || call == kAllToAll || (call == kGather ? rank == 0 : rank == 1); }
// Whether rank `rank` of 2 sends a block to the other in `call`.
bool sends(int call, int rank) { return receives(call, 1 - rank); }

// The pool bytes a rank read and wrote in each call, of `count` floats a block on 2 ranks; its
// exit code is 1 on a wrong result or a failed call.
int runCalls(int rank, const cxlcclUniqueId& id, std::size_t count, std::vector<std::uint64_t>* traffic) {
  cxlcclComm_t comm = nullptr;
  if (cxlcclCommInitRank(&comm, 2, id, rank) != cxlcclSuccess) return 1;
  std::vector<float> send(2 * count), recv(2 * count);
  for (std::size_t i = 0; i < send.size(); ++i) send[i] = static_cast<float>(rank * 1000003 + static_cast<int>(i % 999983));
  auto sent = [&](int r, std::size_t i) { return static_cast<float>(r * 1000003 + static_cast<int>(i % 999983)); };
  int wrong = 0;
  for (int call = 0; call < kCalls; ++call) {
    std::fill(recv.begin(), recv.end(), -1.0f);
    cxlcclCommStats_t before{}, after{};
    cxlcclCommStats(comm, &before);
    cxlcclResult_t result = cxlcclSuccess;
    switch (call) {
      case kAllGather:
        result = cxlcclAllGather(send.data(), recv.data(), count, cxlcclFloat, comm, nullptr);
        break;
      case kAllToAll:
        result = cxlcclAllToAll(send.data(), recv.data(), count, cxlcclFloat, comm, nullptr);
        break;
      case kBroadcast:
        result = cxlcclBroadcast(send.data(), recv.data(), count, cxlcclFloat, 0, comm, nullptr);
        break;
      case kScatter:
        result = cxlcclScatter(send.data(), recv.data(), count, cxlcclFloat, 0, comm, nullptr);
        break;
      default:
        result = cxlcclGather(send.data(), recv.data(), count, cxlcclFloat, 0, comm, nullptr);
        break;
    }
    if (result != cxlcclSuccess) return 1;
    cxlcclCommStats(comm, &after);
    traffic->push_back(after.poolBytesRead - before.poolBytesRead);
    traffic->push_back(after.poolBytesWritten - before.poolBytesWritten);
    if (call == kGather && rank != 0) continue;  // (nothing received)
    // (recv[i]: from which rank, and which element of its send buffer.)
    const std::size_t elements = call == kBroadcast || call == kScatter ? count : 2 * count;
    for (std::size_t i = 0; i < elements; ++i) {
      const int from = call == kBroadcast || call == kScatter ? 0 : static_cast<int>(i / count);
      const std::size_t at = call == kAllGather || call == kGather ? i % count
                             : call == kBroadcast                  ? i
                                                                   : static_cast<std::size_t>(rank) * count + i % count;
      wrong += recv[i] != sent(from, at);
    }
  }
  if (wrong != 0) std::fprintf(stderr, "rank %d: %d wrong\n", rank, wrong);
  return cxlcclCommDestroy(comm) == cxlcclSuccess && wrong == 0 ? 0 : 1;
}

// Runs the calls on 2 ranks and checks each rank's pool traffic: with `throughPool`, every block
// a rank sends it writes into the pool and every block it receives it reads from there; without,
// neither. Beside the blocks only flags may cross (under 1 KiB a call: Gather's announcements).
void checkTraffic(std::size_t count, bool throughPool) {
  TempPool pool;
  cxlcclUniqueId id;
  REQUIRE(cxlcclGetUniqueId(&id) == cxlcclSuccess);
  const std::uint64_t block = count * sizeof(float);
  std::vector<int> codes = runRanks(2, [&](int rank) {
    std::vector<std::uint64_t> traffic;
    if (runCalls(rank, id, count, &traffic) != 0) return 1;
    for (int call = 0; call < kCalls; ++call) {
      const std::uint64_t read = traffic[static_cast<std::size_t>(2 * call)], written = traffic[static_cast<std::size_t>(2 * call + 1)];
      const std::uint64_t readData = throughPool && receives(call, rank) ? block : 0;
      const std::uint64_t writtenData = throughPool && sends(call, rank) ? block : 0;
      if (read < readData || read >= readData + 1024 || written < writtenData || written >= writtenData + 1024) {
        std::fprintf(stderr, "rank %d, call %d: read %llu, wrote %llu bytes in the pool (blocks due: %llu, %llu)\n", rank, call,
                     static_cast<unsigned long long>(read), static_cast<unsigned long long>(written),
                     static_cast<unsigned long long>(readData), static_cast<unsigned long long>(writtenData));
        return 1;
      }
    }
    return 0;
  });
  CHECK(codes[0] == 0);
  CHECK(codes[1] == 0);
}

}  // namespace

TEST_CASE("ranks on one host read each other's chunks directly: right results, and none of the data through the pool", "[cxl]") {
  const std::size_t count = 256 << 10;  // 1 MiB of floats a block
  SECTION("on") {
    ScopedEnv env("CXLCCL_DIRECT", "on");
    checkTraffic(count, false);
  }
  SECTION("off") {
    ScopedEnv env("CXLCCL_DIRECT", "off");
    checkTraffic(count, true);
  }
}

TEST_CASE("chunks under the direct reads' minimum go through the ring even where ranks read directly", "[cxl]") {
  ScopedEnv env("CXLCCL_DIRECT", "on");
  checkTraffic((cxlccl::DirectReads::kMinBytes / sizeof(float)) / 2, true);
}

TEST_CASE("a direct read copies another process's memory, and says so when the process has exited", "[cxl]") {
  std::vector<std::uint64_t> theirs(100000);
  for (std::size_t i = 0; i < theirs.size(); ++i) theirs[i] = i * 7 + 3;
  int ready[2], done[2];
  REQUIRE(pipe(ready) == 0);
  REQUIRE(pipe(done) == 0);
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {  // holds `theirs` (a copy of the parent's, at the same address) until told
    char c = 0;
    (void)!write(ready[1], &c, 1);
    (void)!read(done[0], &c, 1);
    _exit(0);
  }
  char c = 0;
  REQUIRE(read(ready[0], &c, 1) == 1);
  std::vector<std::uint64_t> mine(theirs.size());
  std::fill(theirs.begin(), theirs.end(), 0);  // the parent's copy only: the child keeps its own
  REQUIRE(cxlccl::DirectReads::read(child, mine.data(), theirs.data(), theirs.size() * sizeof(std::uint64_t)).ok());
  long long firstWrong = -1;
  for (std::size_t i = 0; i < mine.size() && firstWrong < 0; ++i)
    if (mine[i] != i * 7 + 3) firstWrong = static_cast<long long>(i);
  CHECK(firstWrong == -1);
  REQUIRE(write(done[1], &c, 1) == 1);
  REQUIRE(waitpid(child, nullptr, 0) == child);
  const cxlccl::Status gone = cxlccl::DirectReads::read(child, mine.data(), theirs.data(), 4096);
  CHECK(gone.code == cxlcclRemoteError);
  CHECK(gone.message.find("pid " + std::to_string(child) + " has exited") != std::string::npos);
  for (int fd : {ready[0], ready[1], done[0], done[1]}) close(fd);
}

// In a group a Send's chunks are read directly; a lone Send still copies into the ring and
// returns before its Recv, so two ranks may each Send before they Recv.
TEST_CASE("grouped Send/Recv is read directly, and a lone Send still returns before its Recv", "[cxl]") {
  ScopedEnv env("CXLCCL_DIRECT", "on");
  TempPool pool;
  cxlcclUniqueId id;
  REQUIRE(cxlcclGetUniqueId(&id) == cxlcclSuccess);
  const std::size_t count = 256 << 10;  // 1 MiB of floats
  std::vector<int> codes = runRanks(2, [&](int rank) {
    cxlcclComm_t comm = nullptr;
    if (cxlcclCommInitRank(&comm, 2, id, rank) != cxlcclSuccess) return 1;
    const int peer = 1 - rank;
    std::vector<float> send(count), recv(count);
    int wrong = 0;
    for (int lone = 0; lone < 2; ++lone) {
      for (std::size_t i = 0; i < count; ++i) send[i] = static_cast<float>(rank * 1000 + lone * 100 + static_cast<int>(i % 97));
      std::fill(recv.begin(), recv.end(), -1.0f);
      cxlcclCommStats_t before{}, after{};
      cxlcclCommStats(comm, &before);
      if (lone == 0) {
        if (cxlcclGroupStart() != cxlcclSuccess) return 1;
        if (cxlcclSend(send.data(), count, cxlcclFloat, peer, comm, nullptr) != cxlcclSuccess) return 1;
        if (cxlcclRecv(recv.data(), count, cxlcclFloat, peer, comm, nullptr) != cxlcclSuccess) return 1;
        if (cxlcclGroupEnd() != cxlcclSuccess) return 1;
      } else {
        if (cxlcclSend(send.data(), count, cxlcclFloat, peer, comm, nullptr) != cxlcclSuccess) return 1;
        if (cxlcclRecv(recv.data(), count, cxlcclFloat, peer, comm, nullptr) != cxlcclSuccess) return 1;
      }
      cxlcclCommStats(comm, &after);
      for (std::size_t i = 0; i < count; ++i) wrong += recv[i] != static_cast<float>(peer * 1000 + lone * 100 + static_cast<int>(i % 97));
      const std::uint64_t read = after.poolBytesRead - before.poolBytesRead;
      if (read != (lone == 0 ? 0 : count * sizeof(float))) {
        std::fprintf(stderr, "rank %d, %s: read %llu bytes in the pool\n", rank, lone ? "lone" : "grouped",
                     static_cast<unsigned long long>(read));
        ++wrong;
      }
    }
    return cxlcclCommDestroy(comm) == cxlcclSuccess && wrong == 0 ? 0 : 1;
  });
  CHECK(codes[0] == 0);
  CHECK(codes[1] == 0);
}

TEST_CASE("a direct write fills another process's memory, and says so when the process has exited", "[cxl]") {
  constexpr std::size_t kWords = 100000;
  std::vector<std::uint64_t> theirs(kWords, 0);
  int ready[2], done[2];
  REQUIRE(pipe(ready) == 0);
  REQUIRE(pipe(done) == 0);
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {  // once told, exits 0 when its copy of `theirs` holds what the parent wrote
    char c = 0;
    (void)!write(ready[1], &c, 1);
    (void)!read(done[0], &c, 1);
    for (std::size_t i = 0; i < kWords; ++i)
      if (theirs[i] != i * 5 + 1) _exit(1);
    _exit(0);
  }
  char c = 0;
  REQUIRE(read(ready[0], &c, 1) == 1);
  std::vector<std::uint64_t> mine(kWords);
  for (std::size_t i = 0; i < kWords; ++i) mine[i] = i * 5 + 1;
  const auto at = reinterpret_cast<std::uintptr_t>(theirs.data());
  REQUIRE(cxlccl::DirectReads::write(child, at, mine.data(), kWords * sizeof(std::uint64_t)).ok());
  CHECK(theirs[1] == 0);  // (the parent's own copy is untouched)
  REQUIRE(write(done[1], &c, 1) == 1);
  int status = -1;
  REQUIRE(waitpid(child, &status, 0) == child);
  CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
  const cxlccl::Status gone = cxlccl::DirectReads::write(child, at, mine.data(), 4096);
  CHECK(gone.code == cxlcclRemoteError);
  CHECK(gone.message.find("pid " + std::to_string(child) + " has exited") != std::string::npos);
  for (int fd : {ready[0], ready[1], done[0], done[1]}) close(fd);
}

namespace {

// Whether malloc maps a fresh block of `bytes` rather than carving it from the heap, which lies
// below the program break. (Freeing a mapped block raises glibc's threshold to its size: a
// process can ask this once for a size, or for smaller sizes first.) Unused under sanitizers.
[[maybe_unused]] bool mallocMaps(std::size_t bytes) {
  void* p = std::malloc(bytes);
  const bool mapped = reinterpret_cast<std::uintptr_t>(p) > reinterpret_cast<std::uintptr_t>(sbrk(0));
  std::free(p);
  return mapped;
}

}  // namespace

// The library's own large buffers freed at creation (the probes, the timed AllGathers of up to 8
// MiB) are mapped, not malloc'd: freed through malloc, they would raise glibc's mmap threshold
// for the whole process, and the application's later buffers would come from the heap instead
// (PageBuffer.h).
TEST_CASE("creating a communicator leaves where malloc puts the application's later buffers", "[cxl]") {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  MTM_SKIP("a sanitizer's malloc replaces glibc's here");
#else
  if (!mallocMaps(256 << 10)) MTM_SKIP("this process's malloc puts 256 KiB blocks on the heap already (run this test case alone)");
  TempPool pool;
  ScopedEnv env("CXLCCL_DIRECT", "auto");  // the probes and the timed AllGathers
  cxlcclUniqueId id;
  REQUIRE(cxlcclGetUniqueId(&id) == cxlcclSuccess);
  std::vector<int> codes = runRanks(2, [&](int rank) {
    cxlcclComm_t comm = nullptr;
    if (cxlcclCommInitRank(&comm, 2, id, rank) != cxlcclSuccess) return 1;
    const bool mapped = mallocMaps(512 << 10);
    if (!mapped) std::fprintf(stderr, "rank %d: a 512 KiB malloc after creation came from the heap\n", rank);
    return cxlcclCommDestroy(comm) == cxlcclSuccess && mapped ? 0 : 2;
  });
  CHECK(codes[0] == 0);
  CHECK(codes[1] == 0);
#endif
}

// The floor that bench-collectives prints beside AllGather and AllToAll: processes that read each
// other's blocks, checked, a row a size; arguments out of range refused with the usage.
TEST_CASE("the one-copy floor's processes read each other's blocks: a row a size, and bad arguments refused", "[cxl]") {
  const std::string tool = std::string(CXLCCL_TOOLS_DIR) + "/cxlccl-memcpy-perf";
  for (int ranks : {2, 3}) {
    const mtm::test::RunResult r = mtm::test::run({tool, "--one-copy-floor", std::to_string(ranks), "-b", "192K", "-e", "768K", "-f", "4"});
    INFO(r.out << r.err);
    REQUIRE(r.exitCode == 0);
    std::size_t rows = 0;
    for (std::size_t at = 0; at < r.out.size();) {
      std::size_t end = r.out.find('\n', at);
      if (end == std::string::npos) end = r.out.size();
      unsigned long long bytes = 0;
      double us = 0;
      if (r.out[at] != '#' && std::sscanf(r.out.c_str() + at, "%llu %lf", &bytes, &us) == 2) {
        CHECK(bytes == (rows == 0 ? 192u << 10 : 768u << 10));
        CHECK(us > 0);
        ++rows;
      }
      at = end + 1;
    }
    CHECK(rows == 2);
  }
  for (const std::vector<std::string>& bad : std::vector<std::vector<std::string>>{{"1"}, {"65"}, {}}) {
    std::vector<std::string> argv{tool, "--one-copy-floor"};
    argv.insert(argv.end(), bad.begin(), bad.end());
    const mtm::test::RunResult r = mtm::test::run(argv);
    INFO("--one-copy-floor " << (bad.empty() ? "" : bad[0]));
    CHECK(r.exitCode == 2);
    CHECK(r.err.find("usage: cxlccl-memcpy-perf") != std::string::npos);
  }
}
