// Same-host direct reads (DirectReads.h): under CXLCCL_DIRECT=on a rank reads its peers' chunks
// of AllGather, AllToAll, Broadcast, Scatter and grouped Send/Recv straight from their buffers -- none of
// that data crosses the pool -- and under off through the rings; chunks under DirectReads::kMinBytes always go
// through the rings; a read from a process that exited is an error that says so.

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

using namespace cxlccl::test;

namespace {

struct DirectEnv {
  explicit DirectEnv(const char* mode) { setenv("CXLCCL_DIRECT", mode, 1); }
  ~DirectEnv() { unsetenv("CXLCCL_DIRECT"); }
};

// The pool bytes a rank read and wrote in each of AllGather, AllToAll, Broadcast and Scatter
// (root 0) of `count` floats a block on 2 ranks; its exit code is 1 on a wrong result or a
// failed call.
constexpr int kCalls = 4;
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
    cxlcclResult_t result = call == 0   ? cxlcclAllGather(send.data(), recv.data(), count, cxlcclFloat, comm, nullptr)
                            : call == 1 ? cxlcclAllToAll(send.data(), recv.data(), count, cxlcclFloat, comm, nullptr)
                            : call == 2 ? cxlcclBroadcast(send.data(), recv.data(), count, cxlcclFloat, 0, comm, nullptr)
                                        : cxlcclScatter(send.data(), recv.data(), count, cxlcclFloat, 0, comm, nullptr);
    if (result != cxlcclSuccess) return 1;
    cxlcclCommStats(comm, &after);
    traffic->push_back(after.poolBytesRead - before.poolBytesRead);
    traffic->push_back(after.poolBytesWritten - before.poolBytesWritten);
    const std::size_t blocks = call >= 2 ? 1 : 2;
    for (std::size_t i = 0; i < blocks * count; ++i) {
      const int from = call >= 2 ? 0 : static_cast<int>(i / count);
      const std::size_t at = call == 0   ? i % count
                             : call == 1 ? static_cast<std::size_t>(rank) * count + i % count
                             : call == 2 ? i
                                         : static_cast<std::size_t>(rank) * count + i;
      wrong += recv[i] != sent(from, at);
    }
  }
  if (wrong != 0) std::fprintf(stderr, "rank %d: %d wrong\n", rank, wrong);
  return cxlcclCommDestroy(comm) == cxlcclSuccess && wrong == 0 ? 0 : 1;
}

// Each rank's traffic per call, checked by `check(call, read, written)` in the rank.
void checkTraffic(std::size_t count, const std::function<bool(int call, std::uint64_t read, std::uint64_t written)>& check) {
  TempPool pool;
  cxlcclUniqueId id;
  REQUIRE(cxlcclGetUniqueId(&id) == cxlcclSuccess);
  std::vector<int> codes = runRanks(2, [&](int rank) {
    std::vector<std::uint64_t> traffic;
    if (runCalls(rank, id, count, &traffic) != 0) return 1;
    for (int call = 0; call < kCalls; ++call) {
      const std::uint64_t read = traffic[static_cast<std::size_t>(2 * call)], written = traffic[static_cast<std::size_t>(2 * call + 1)];
      if (!check(call, rank == 0 && call >= 2 ? ~0ull : read, written)) {
        std::fprintf(stderr, "rank %d, call %d: read %llu, wrote %llu bytes in the pool\n", rank, call,
                     static_cast<unsigned long long>(read), static_cast<unsigned long long>(written));
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
    DirectEnv env("on");
    // (A Broadcast or Scatter root reads nothing: its check is skipped, ~0.)
    checkTraffic(count, [](int, std::uint64_t read, std::uint64_t written) { return (read == ~0ull || read == 0) && written == 0; });
  }
  SECTION("off") {
    DirectEnv env("off");
    const std::uint64_t block = count * sizeof(float);
    checkTraffic(count, [&](int call, std::uint64_t read, std::uint64_t written) {
      // (What a root writes is its peer's block, and a peer of the root writes nothing.)
      return (read == ~0ull || read == block) && (written == (call >= 2 ? 0 : block) || call >= 2);
    });
  }
}

TEST_CASE("chunks under the direct reads' minimum go through the ring even where ranks read directly", "[cxl]") {
  DirectEnv env("on");
  const std::size_t count = (cxlccl::DirectReads::kMinBytes / sizeof(float)) / 2;
  const std::uint64_t block = count * sizeof(float);
  checkTraffic(count, [&](int, std::uint64_t read, std::uint64_t) { return read == ~0ull || read == block; });
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
  DirectEnv env("on");
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
