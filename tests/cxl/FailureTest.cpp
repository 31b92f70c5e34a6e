// A rank that dies, stalls or aborts makes the others' calls fail within the timeout, never
// hang; bad arguments and bad pools are refused with a clear error.

#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <string>
#include <thread>
#include <vector>

#include "Pool.h"
#include "Ranks.h"
#include "Run.h"
#include "Skip.h"

using namespace cxlccl::test;

namespace {

cxlcclComm_t initRank(const cxlcclUniqueId& id, int n, int rank, int timeoutMs, int heartbeatMs) {
  cxlcclConfig_t config = CXLCCL_CONFIG_INITIALIZER;
  config.timeoutMs = timeoutMs;
  config.heartbeatTimeoutMs = heartbeatMs;
  return initRankWith(id, n, rank, config);
}

// Exit codes of the surviving ranks: 0 when their call failed with `expected` and a message
// containing one of `texts` (a survivor may learn of the failure from another survivor whose
// call failed first, or that aborted).
int expectFailure(cxlcclComm_t comm, cxlcclResult_t result, cxlcclResult_t expected, std::initializer_list<const char*> texts) {
  std::string message = cxlcclGetLastError(comm);
  bool said = std::any_of(texts.begin(), texts.end(), [&](const char* text) { return message.find(text) != std::string::npos; });
  if (result != expected || !said) {
    std::fprintf(stderr, "expected %d with '%s' (or another), got %d: %s\n", expected, *texts.begin(), result, message.c_str());
    return 1;
  }
  cxlcclResult_t async = cxlcclSuccess;
  cxlcclCommGetAsyncError(comm, &async);
  if (async != expected) return 2;
  cxlcclCommAbort(comm);
  return 0;
}

// Runs body(comm, rank) on the ranks of a new communicator in `pool`; their exit codes.
std::vector<int> onRanks(int n, int timeoutMs, int heartbeatMs, const std::function<int(cxlcclComm_t, int)>& body) {
  cxlcclUniqueId id;
  REQUIRE(cxlcclGetUniqueId(&id) == cxlcclSuccess);
  return runRanks(n, [&](int rank) {
    cxlcclComm_t comm = initRank(id, n, rank, timeoutMs, heartbeatMs);
    return comm == nullptr ? 1 : body(comm, rank);
  });
}

// Lets this process map no more than it has mapped now and `bytes` besides (RLIMIT_AS). Unused
// under sanitizers.
[[maybe_unused]] bool limitAddressSpace(std::size_t bytes) {
  std::ifstream statm("/proc/self/statm");
  std::size_t pages = 0;
  if (!(statm >> pages)) return false;
  const rlim_t limit = pages * static_cast<rlim_t>(sysconf(_SC_PAGESIZE)) + bytes;
  const rlimit value{limit, limit};
  return setrlimit(RLIMIT_AS, &value) == 0;
}

std::size_t regionsLeft(const std::string& path) {
  std::shared_ptr<cxlccl::Pool> pool;
  REQUIRE(cxlccl::Pool::open(path, 0, &pool).ok());
  return pool->regions().size();
}

}  // namespace

// Gather with direct reads on: rank 1 writes its block straight into the root's buffer while
// the root learns of rank 2's death; the root's failed call waits for rank 1 to stop writing.
TEST_CASE("a rank killed mid-collective fails the others' call", "[cxl]") {
  const std::string call = GENERATE(as<std::string>{}, "AllGather", "Gather");
  INFO(call);
  const bool gather = call == "Gather";
  ScopedEnv direct("CXLCCL_DIRECT", gather ? "on" : "auto");
  TempPool pool;
  const std::size_t count = 16 << 20;  // 64 MiB of floats: the kill lands mid-call
  std::vector<int> codes = onRanks(3, 60000, 1000, [&](cxlcclComm_t comm, int rank) {
    std::vector<float> send(count, 1.0f), recv(count * 3);
    auto run = [&] {
      return gather ? cxlcclGather(send.data(), recv.data(), count, cxlcclFloat, 0, comm, nullptr)
                    : cxlcclAllGather(send.data(), recv.data(), count, cxlcclFloat, comm, nullptr);
    };
    if (rank == 2) {
      std::thread killer([] {
        std::this_thread::sleep_for(std::chrono::milliseconds(30));
        raise(SIGKILL);
      });
      run();
      killer.join();
      return 3;  // not reached unless the call finished first
    }
    // The survivors go on calling until one fails (the first may finish before the kill).
    for (int i = 0; i < 50; ++i) {
      cxlcclResult_t result = run();
      if (result != cxlcclSuccess)
        return expectFailure(comm, result, cxlcclRemoteError, {"rank 2", "failed a call", "aborted the communicator", "exited while"});
    }
    return 4;
  });
  CHECK(codes[0] == 0);
  CHECK(codes[1] == 0);
  CHECK(codes[2] == 128 + SIGKILL);
  CHECK(regionsLeft(pool.path()) == 0);  // the last survivor out freed the region
}

TEST_CASE("a rank that stalls fails the others' call after the timeout", "[cxl]") {
  TempPool pool;
  std::vector<int> codes = onRanks(2, 1500, 5000, [&](cxlcclComm_t comm, int rank) {
    std::vector<int> send(4, rank), recv(8);
    if (rank == 1) {  // alive (its heartbeat goes on) but never calls
      std::this_thread::sleep_for(std::chrono::milliseconds(4000));
      cxlcclCommAbort(comm);
      return 0;
    }
    cxlcclResult_t result = cxlcclAllGather(send.data(), recv.data(), 4, cxlcclInt32, comm, nullptr);
    return expectFailure(comm, result, cxlcclRemoteError, {"no progress"});
  });
  CHECK(codes[0] == 0);
  CHECK(codes[1] == 0);
}

TEST_CASE("CommAbort makes the peers fail and frees the region", "[cxl]") {
  TempPool pool;
  std::vector<int> codes = onRanks(2, 30000, 5000, [&](cxlcclComm_t comm, int rank) {
    if (rank == 1) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      return cxlcclCommAbort(comm) == cxlcclSuccess ? 0 : 2;
    }
    std::vector<double> data(1000, 1.0);
    cxlcclResult_t result = cxlcclBroadcast(data.data(), data.data(), data.size(), cxlcclDouble, 1, comm, nullptr);
    return expectFailure(comm, result, cxlcclRemoteError, {"aborted"});
  });
  CHECK(codes[0] == 0);
  CHECK(codes[1] == 0);
  CHECK(regionsLeft(pool.path()) == 0);
}

TEST_CASE("ranks that disagree on the count get an error not wrong data", "[cxl]") {
  TempPool pool;
  std::vector<int> codes = onRanks(2, 2000, 5000, [&](cxlcclComm_t comm, int rank) {
    std::size_t count = rank == 0 ? 100 : 200;
    std::vector<int> send(count, 1), recv(2 * count);
    cxlcclResult_t result = cxlcclAllGather(send.data(), recv.data(), count, cxlcclInt32, comm, nullptr);
    // Both ranks see the mismatch; the first to abort must not beat the other's own check.
    std::this_thread::sleep_for(std::chrono::milliseconds(1000));
    return expectFailure(comm, result, cxlcclInvalidUsage, {"different arguments"});
  });
  CHECK(codes[0] == 0);
  CHECK(codes[1] == 0);
}

TEST_CASE("bad arguments are refused before anything moves", "[cxl]") {
  TempPool pool;
  std::vector<int> codes = onRanks(2, 30000, 5000, [&](cxlcclComm_t comm, int rank) {
    std::vector<float> buf(64, 1.0f), out(128);
    int failures = 0;
    // Each refusal's own message, checked right after its call.
    auto check = [&](cxlcclResult_t result, const char* text) {
      std::string message = cxlcclGetLastError(comm);
      if (result == cxlcclSuccess || message.find(text) == std::string::npos) {
        std::fprintf(stderr, "rank %d: expected an error with '%s', got %d: %s\n", rank, text, result, message.c_str());
        ++failures;
      }
    };
    check(cxlcclAllGather(nullptr, out.data(), 64, cxlcclFloat, comm, nullptr), "sendbuff is NULL");
    check(cxlcclBroadcast(buf.data(), buf.data(), 64, cxlcclFloat, 2, comm, nullptr), "root 2 is out of range");
    check(cxlcclAllReduce(buf.data(), out.data(), 64, static_cast<cxlcclDataType_t>(42), cxlcclSum, comm, nullptr), "datatype 42");
    check(cxlcclAllReduce(buf.data(), out.data(), 64, cxlcclFloat, static_cast<cxlcclRedOp_t>(9), comm, nullptr), "reduction op 9");
    check(cxlcclSend(buf.data(), 64, cxlcclFloat, 5, comm, nullptr), "peer 5");
    check(cxlcclAllGather(buf.data(), out.data(), SIZE_MAX / 2, cxlcclFloat, comm, nullptr), "overflows");
    // A stream where no GPU can run it ("built without CUDA" or "no GPU is usable here").
    if (access("/dev/nvidiactl", F_OK) != 0)
      check(cxlcclAllGather(buf.data(), out.data(), 64, cxlcclFloat, comm, reinterpret_cast<cudaStream_t>(8)),
            "host buffers take stream NULL");
    check(cxlcclAllReduce(buf.data(), nullptr, 64, cxlcclFloat, cxlcclSum, comm, nullptr), "recvbuff is NULL");
    check(cxlcclReduce(buf.data(), out.data(), 64, cxlcclFloat, cxlcclSum, -1, comm, nullptr), "root -1");
    check(cxlcclAllGather(buf.data(), out.data(), 64, cxlcclFloat, nullptr, nullptr), "comm is NULL");
    // The communicator still works after refusals.
    if (cxlcclAllGather(buf.data(), out.data(), 64, cxlcclFloat, comm, nullptr) != cxlcclSuccess) ++failures;
    if (cxlcclCommDestroy(comm) != cxlcclSuccess) ++failures;
    return failures;
  });
  CHECK(codes[0] == 0);
  CHECK(codes[1] == 0);
}

// Read directly (on) or through the ring (off): more chunks than a pair's ring has headers either way.
TEST_CASE("send and recv in a group pass messages larger than the ring", "[cxl]") {
  const std::string direct = GENERATE(as<std::string>{}, "off", "on");
  ScopedEnv mode("CXLCCL_DIRECT", direct);
  TempPool pool;
  const std::size_t count = 10 << 20;  // 40 MiB each way: the p2p ring holds 1 MiB, its 16 headers 32 MiB read directly
  std::vector<int> codes = onRanks(2, 30000, 5000, [&](cxlcclComm_t comm, int rank) {
    int peer = 1 - rank;
    std::vector<std::int32_t> send(count), recv(count, -1);
    for (std::size_t i = 0; i < count; ++i) send[i] = static_cast<std::int32_t>(i * 3 + static_cast<std::size_t>(rank));
    cxlcclGroupStart();
    cxlcclSend(send.data(), count, cxlcclInt32, peer, comm, nullptr);
    cxlcclRecv(recv.data(), count, cxlcclInt32, peer, comm, nullptr);
    if (cxlcclGroupEnd() != cxlcclSuccess) return 2;
    for (std::size_t i = 0; i < count; ++i) {
      if (recv[i] != static_cast<std::int32_t>(i * 3 + static_cast<std::size_t>(peer))) return 3;
    }
    // Outside a group, a small message: rank 0 sends, rank 1 receives; sizes must agree.
    std::int32_t small[5] = {1, 2, 3, 4, 5};
    if (rank == 0 && cxlcclSend(small, 5, cxlcclInt32, 1, comm, nullptr) != cxlcclSuccess) return 4;
    if (rank == 1) {
      std::int32_t got[5] = {};
      if (cxlcclRecv(got, 5, cxlcclInt32, 0, comm, nullptr) != cxlcclSuccess) return 5;
      if (std::memcmp(got, small, sizeof small) != 0) return 6;
    }
    return cxlcclCommDestroy(comm) == cxlcclSuccess ? 0 : 7;
  });
  CHECK(codes[0] == 0);
  CHECK(codes[1] == 0);
  CHECK(regionsLeft(pool.path()) == 0);
}

TEST_CASE("send and recv from buffers in the pool -- in a group read where they lie and alone still before the peer receives", "[cxl]") {
  TempPool pool;
  const std::size_t count = 3 << 20;  // 12 MiB each way
  std::vector<int> codes = onRanks(2, 30000, 5000, [&](cxlcclComm_t comm, int rank) {
    int peer = 1 - rank;
    std::int32_t* send = nullptr;
    if (cxlcclMemAlloc(reinterpret_cast<void**>(&send), count * 4) != cxlcclSuccess) return 1;
    std::vector<std::int32_t> recv(count, -1);
    for (std::size_t i = 0; i < count; ++i) send[i] = static_cast<std::int32_t>(i * 5 + static_cast<std::size_t>(rank));
    cxlcclGroupStart();
    cxlcclSend(send, count, cxlcclInt32, peer, comm, nullptr);
    cxlcclRecv(recv.data(), count, cxlcclInt32, peer, comm, nullptr);
    if (cxlcclGroupEnd() != cxlcclSuccess) return 2;
    for (std::size_t i = 0; i < count; ++i) {
      if (recv[i] != static_cast<std::int32_t>(i * 5 + static_cast<std::size_t>(peer))) return 3;
    }
    // Both ranks Send, then Recv, outside a group: a lone Send returns before the peer reads.
    if (cxlcclSend(send, 1000, cxlcclInt32, peer, comm, nullptr) != cxlcclSuccess) return 4;
    if (cxlcclRecv(recv.data(), 1000, cxlcclInt32, peer, comm, nullptr) != cxlcclSuccess) return 5;
    for (std::size_t i = 0; i < 1000; ++i) {
      if (recv[i] != static_cast<std::int32_t>(i * 5 + static_cast<std::size_t>(peer))) return 6;
    }
    if (cxlcclMemFree(send) != cxlcclSuccess) return 7;
    return cxlcclCommDestroy(comm) == cxlcclSuccess ? 0 : 8;
  });
  CHECK(codes[0] == 0);
  CHECK(codes[1] == 0);
  CHECK(regionsLeft(pool.path()) == 0);
}

TEST_CASE("a pool without a cxlccl header or with a stale generation is refused", "[cxl]") {
  TempPool pool;
  {
    std::ofstream junk(pool.path());
    junk << std::string(8 << 20, 'x');
  }
  cxlcclUniqueId id;
  CHECK(cxlcclGetUniqueId(&id) == cxlcclInvalidUsage);
  CHECK(std::string(cxlcclGetLastError(nullptr)).find("no cxlccl header (format it: cxlccl-pool format") != std::string::npos);

  REQUIRE(cxlccl::Pool::format(pool.path(), 0, cxlccl::PoolFormat{true}).ok());
  REQUIRE(cxlcclGetUniqueId(&id) == cxlcclSuccess);
  REQUIRE(cxlccl::Pool::format(pool.path(), 0, cxlccl::PoolFormat{true}).ok());  // a new generation
  cxlcclComm_t comm = nullptr;
  CHECK(cxlcclCommInitRank(&comm, 1, id, 0) == cxlcclInvalidUsage);
  CHECK(std::string(cxlcclGetLastError(nullptr)).find("reformatted since") != std::string::npos);
  CHECK(comm == nullptr);
}

TEST_CASE("ranks from the environment find each other by the job id", "[cxl]") {
  TempPool pool;
  setenv("CXLCCL_JOB_ID", ("env-test-" + std::to_string(getpid())).c_str(), 1);
  std::vector<int> codes = runRanks(3, [&](int rank) {
    setenv("CXLCCL_RANK", std::to_string(rank).c_str(), 1);
    setenv("CXLCCL_NRANKS", "3", 1);
    cxlcclComm_t comm = nullptr;
    if (cxlcclCommInitEnv(&comm, nullptr) != cxlcclSuccess) return 1;
    int n = 0, me = -1;
    cxlcclCommCount(comm, &n);
    cxlcclCommUserRank(comm, &me);
    std::int64_t value = rank + 1, sum = 0;
    if (cxlcclAllReduce(&value, &sum, 1, cxlcclInt64, cxlcclSum, comm, nullptr) != cxlcclSuccess) return 2;
    if (n != 3 || me != rank || sum != 6) return 3;
    return cxlcclCommDestroy(comm) == cxlcclSuccess ? 0 : 4;
  });
  unsetenv("CXLCCL_JOB_ID");
  for (int code : codes) CHECK(code == 0);
  unsetenv("CXLCCL_RANK");
  cxlcclComm_t comm = nullptr;
  CHECK(cxlcclCommInitEnv(&comm, nullptr) == cxlcclInvalidArgument);
  // MPICH's mpirun sets a rank and size but no job id: the error says how to give one.
  unsetenv("CXLCCL_NRANKS");
  setenv("PMI_RANK", "0", 1);
  setenv("PMI_SIZE", "1", 1);
  CHECK(cxlcclCommInitEnv(&comm, nullptr) == cxlcclInvalidArgument);
  CHECK_THAT(cxlcclGetLastError(nullptr), Catch::Contains("set CXLCCL_JOB_ID") && Catch::Contains("mpirun.mpich -genv CXLCCL_JOB_ID"));
  unsetenv("PMI_RANK");
  unsetenv("PMI_SIZE");
}

TEST_CASE("MemAlloc and MemFree refuse what is not theirs", "[cxl]") {
  TempPool pool;
  void* p = nullptr;
  CHECK(cxlcclMemAlloc(&p, 0) == cxlcclInvalidArgument);
  CHECK(cxlcclMemAlloc(nullptr, 4096) == cxlcclInvalidArgument);
  REQUIRE(cxlcclMemAlloc(&p, 4096) == cxlcclSuccess);
  CHECK(regionsLeft(pool.path()) == 1);
  int local = 0;
  CHECK(cxlcclMemFree(&local) == cxlcclInvalidArgument);
  CHECK_THAT(cxlcclGetLastError(nullptr), Catch::Contains("is not a buffer from cxlcclMemAlloc"));
  CHECK(cxlcclMemFree(p) == cxlcclSuccess);
  CHECK(cxlcclMemFree(p) == cxlcclInvalidArgument);  // twice
  CHECK(regionsLeft(pool.path()) == 0);
}

TEST_CASE("CommCoherence says the mode a communicator resolved to", "[cxl]") {
  TempPool pool;
  cxlcclUniqueId id;
  REQUIRE(cxlcclGetUniqueId(&id) == cxlcclSuccess);
  cxlcclComm_t comm = nullptr;
  REQUIRE(cxlcclCommInitRank(&comm, 1, id, 0) == cxlcclSuccess);
  int mode = -1;
  CHECK(cxlcclCommCoherence(comm, &mode) == cxlcclSuccess);
  CHECK(mode == cxlcclCoherenceHardware);  // a file the library made: one host, coherent
  CHECK(cxlcclCommCoherence(comm, nullptr) == cxlcclInvalidArgument);
  CHECK(cxlcclCommDestroy(comm) == cxlcclSuccess);

  REQUIRE(cxlcclGetUniqueId(&id) == cxlcclSuccess);
  cxlcclConfig_t config = CXLCCL_CONFIG_INITIALIZER;
  config.coherence = cxlcclCoherenceSimulate;
  REQUIRE(cxlcclCommInitRankConfig(&comm, 1, id, 0, &config) == cxlcclSuccess);
  CHECK(cxlcclCommCoherence(comm, &mode) == cxlcclSuccess);
  CHECK(mode == cxlcclCoherenceSimulate);
  CHECK(cxlcclCommDestroy(comm) == cxlcclSuccess);
}

// A rank whose call failed says so in its rank line (so that no peer reads its buffers directly
// any more) and still holds the region: `cxlccl-pool info` shows it failed, `reclaim` keeps the
// region while its heartbeat beats, and the last rank to abort frees it.
TEST_CASE("a rank whose call failed is listed failed and keeps its region from reclaim until it aborts", "[cxl]") {
  TempPool pool;
  const std::string tool = std::string(CXLCCL_TOOLS_DIR) + "/cxlccl-pool";
  std::vector<int> codes = onRanks(2, 2000, 800, [&](cxlcclComm_t comm, int rank) {
    std::size_t count = rank == 0 ? 100 : 200;
    std::vector<int> send(count, 1), recv(2 * count);
    if (cxlcclAllGather(send.data(), recv.data(), count, cxlcclInt32, comm, nullptr) == cxlcclSuccess) return 2;
    if (rank == 1) {
      std::this_thread::sleep_for(std::chrono::milliseconds(3000));  // beating, while rank 0 looks
      cxlcclCommAbort(comm);
      return 0;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // (rank 1's call has failed too)
    const mtm::test::RunResult info = mtm::test::run({tool, "info", pool.path()});
    const mtm::test::RunResult reclaim = mtm::test::run({tool, "reclaim", "--wait-ms", "400", pool.path()});
    cxlcclCommAbort(comm);
    if (info.out.find("failed failed") == std::string::npos || reclaim.out.find("freed 0 of 1") == std::string::npos) {
      std::fprintf(stderr, "info:\n%s%s\nreclaim:\n%s%s\n", info.out.c_str(), info.err.c_str(), reclaim.out.c_str(), reclaim.err.c_str());
      return 3;
    }
    return 0;
  });
  CHECK(codes[0] == 0);
  CHECK(codes[1] == 0);
  CHECK(regionsLeft(pool.path()) == 0);  // the last rank to abort freed it
}

// An in-place AllToAll copies its input first, into a buffer of the library's own. Where that
// copy cannot be made (here under an address-space limit), the call returns an error and the
// process lives on; its peer's call fails with a remote error once the rank aborts, instead of
// waiting out the timeout.
TEST_CASE("a call that runs out of memory returns an error, the process lives on and its peer's call fails", "[cxl]") {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  MTM_SKIP("a sanitizer's allocator maps its own memory: the address-space limit would stop it first");
#else
  TempPool pool;
  const std::size_t count = 8 << 20;  // 32 MiB of floats a block: the copy needs 64 MiB
  std::vector<int> codes = onRanks(2, 20000, 1000, [&](cxlcclComm_t comm, int rank) {
    std::vector<float> buffer(2 * count, 1.0f);
    if (rank == 0 && !limitAddressSpace(16 << 20)) return 5;
    cxlcclResult_t result = cxlcclAllToAll(buffer.data(), buffer.data(), count, cxlcclFloat, comm, nullptr);
    if (rank == 0) return expectFailure(comm, result, cxlcclSystemError, {"AllToAll: out of memory"});
    return expectFailure(comm, result, cxlcclRemoteError, {"rank 0"});
  });
  CHECK(codes[0] == 0);
  CHECK(codes[1] == 0);
  CHECK(regionsLeft(pool.path()) == 0);
#endif
}
