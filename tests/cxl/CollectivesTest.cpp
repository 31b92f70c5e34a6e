// Every collective x datatype x op x size x in-place, on 1..8 ranks as processes sharing a pool
// on /dev/shm, each result checked element by element against a reference; then the same in the
// non-coherence simulation, where a missing flush or invalidate gives wrong data.

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "Cases.h"
#include "Ranks.h"

using namespace cxlccl::test;

namespace {

// Buffers from cxlcclMemAlloc: published where they lie, read straight from there.
class PoolStores : public DeviceStores {
 public:
  explicit PoolStores(std::size_t bytes) {
    ok_ = cxlcclMemAlloc(&send_, bytes) == cxlcclSuccess && cxlcclMemAlloc(&recv_, bytes) == cxlcclSuccess;
  }
  ~PoolStores() override {
    if (send_ != nullptr) cxlcclMemFree(send_);
    if (recv_ != nullptr) cxlcclMemFree(recv_);
  }

 private:
  void copy(void* dst, const void* src, std::size_t bytes) override { std::memcpy(dst, src, bytes); }
};

// Every case for the given sizes on one communicator of n ranks.
// `sumOnly`: reductions with sum alone and out of place alone (the largest sizes).
int runAll(int rank, int n, const cxlcclUniqueId& id, const std::vector<std::size_t>& counts, int coherence,
           const std::vector<cxlcclDataType_t>& types, bool sumOnly, bool poolBuffers) {
  std::unique_ptr<PoolStores> stores;
  if (poolBuffers) {
    std::size_t largest = *std::max_element(counts.begin(), counts.end()) * 8 * static_cast<std::size_t>(n) + 64;
    stores = std::make_unique<PoolStores>(largest);
    if (!stores->ok()) {
      std::fprintf(stderr, "rank %d: MemAlloc: %s\n", rank, cxlcclGetLastError(nullptr));
      return 1;
    }
  }
  cxlcclConfig_t config = CXLCCL_CONFIG_INITIALIZER;
  config.coherence = coherence;
  config.timeoutMs = 60000;
  cxlcclComm_t comm = initRankWith(id, n, rank, config);
  if (comm == nullptr) return 1;
  int failures = 0;
  std::uint64_t seed = 1;
  for (std::size_t count : counts) {
    for (int k = 0; k < 8; ++k) {
      Kind kind = static_cast<Kind>(k);
      for (cxlcclDataType_t type : types) {
        int ops = reduces(kind) && !sumOnly ? cxlcclNumOps : 1;
        for (int o = 0; o < ops; ++o) {
          for (int inPlace = 0; inPlace < (sumOnly ? 1 : 2); ++inPlace) {
            Case c{kind, type, static_cast<cxlcclRedOp_t>(o), count, inPlace == 1, static_cast<int>(seed % static_cast<std::uint64_t>(n)),
                   seed};
            ++seed;
            failures += runCase(comm, rank, n, c, stores.get());
            if (failures > 5) {
              cxlcclCommAbort(comm);
              return 1;
            }
          }
        }
      }
    }
  }
  if (cxlcclCommDestroy(comm) != cxlcclSuccess) ++failures;
  return failures == 0 ? 0 : 1;
}

std::vector<cxlcclDataType_t> allTypes() {
  std::vector<cxlcclDataType_t> types;
  for (int t = 0; t < cxlcclNumTypes; ++t) types.push_back(static_cast<cxlcclDataType_t>(t));
  return types;
}

void checkAllRanks(int n, const std::vector<std::size_t>& counts, int coherence, const std::vector<cxlcclDataType_t>& types = allTypes(),
                   bool sumOnly = false, int poolDevices = 1, bool poolBuffers = false) {
  TempPool pool(poolDevices);
  cxlcclUniqueId id;
  REQUIRE(cxlcclGetUniqueId(&id) == cxlcclSuccess);
  std::vector<int> codes = runRanks(
      n, [&](int rank) { return runAll(rank, n, id, counts, coherence, types, sumOnly, poolBuffers); }, 600);
  for (int rank = 0; rank < n; ++rank) {
    INFO("rank " << rank << " of " << n);
    CHECK(codes[static_cast<std::size_t>(rank)] == 0);
  }
}

}  // namespace

// Sizes: 1 element, inline in a slot header (<= 96 bytes), odd counts, several chunks (256 KiB
// chunks in 8 slots: 300001 elements of 8 bytes wrap the ring). The largest size runs for one
// type per element size: the types differ only in their arithmetic, covered by the others.
const std::vector<std::size_t> kCounts{1, 7, 1001, 65537};
const std::vector<std::size_t> kLargeCounts{300001};
const std::vector<cxlcclDataType_t> kLargeTypes{cxlcclUint8, cxlcclBfloat16, cxlcclFloat32, cxlcclInt64};

#define CXL_RANKS_TEST(n)                                                     \
  TEST_CASE("every collective x type x op x size on " #n " ranks", "[cxl]") { \
    checkAllRanks(n, kCounts, cxlcclCoherencePool);                           \
    checkAllRanks(n, kLargeCounts, cxlcclCoherencePool, kLargeTypes);         \
  }
CXL_RANKS_TEST(1)
CXL_RANKS_TEST(2)
CXL_RANKS_TEST(3)
CXL_RANKS_TEST(4)
CXL_RANKS_TEST(5)
CXL_RANKS_TEST(8)

// The top of the size range: 64 MiB per rank's buffer, every collective, on 2 ranks.
TEST_CASE("every collective at 64 MiB on 2 ranks", "[cxl]") { checkAllRanks(2, {16u << 20}, cxlcclCoherencePool, {cxlcclFloat32}, true); }

TEST_CASE("every collective in the non-coherence simulation", "[cxl]") {
  int n = GENERATE(2, 3, 5);
  INFO(n << " ranks");
  checkAllRanks(n, kCounts, cxlcclCoherenceSimulate);
}

TEST_CASE("every collective with cache-line flushes", "[cxl]") { checkAllRanks(3, {5, 4099}, cxlcclCoherenceFlush); }

// Striped over three files: every ring and every large message crosses stripes on each.
TEST_CASE("every collective on a pool striped over 3 files", "[cxl]") {
  checkAllRanks(3, {1, 1001, 300001}, cxlcclCoherencePool, kLargeTypes, false, 3);
}

// Each large copy shared by 3 threads per rank (more than this machine's CPUs: still right).
TEST_CASE("every collective with copies shared by 3 threads", "[cxl]") {
  ScopedEnv threads("CXLCCL_COPY_THREADS", "3");
  checkAllRanks(2, {1001, 300001}, cxlcclCoherencePool, kLargeTypes);
  checkAllRanks(2, {300001}, cxlcclCoherenceFlush, {cxlcclFloat32});
}

// Peers on this host read directly (CXLCCL_DIRECT=on, whatever auto would measure) and never
// (off): chunks over and under DirectReads::kMinBytes, a ring's worth and more, on 2 and 3 ranks;
// ordinary buffers, buffers in the pool (read where they lie, chunked as pieces read directly),
// and with cache-line flushes.
TEST_CASE("every collective with same-host direct reads on and off", "[cxl]") {
  const std::string mode = GENERATE(as<std::string>{}, "on", "off");
  const int n = GENERATE(2, 3);
  INFO("CXLCCL_DIRECT=" << mode << ", " << n << " ranks");
  ScopedEnv direct("CXLCCL_DIRECT", mode);
  checkAllRanks(n, {1001, 65537, 300001}, cxlcclCoherencePool, kLargeTypes);
  checkAllRanks(n, {65536, 300001}, cxlcclCoherencePool, {cxlcclFloat32}, false, 1, true);
  checkAllRanks(n, {300001}, cxlcclCoherenceFlush, {cxlcclFloat32});
}

// The smallest chunks (16 KiB; Send/Recv rings 4 KiB): pieces of many chunks, and Gather's and
// Reduce's finer chunks capped by a slot smaller than their usual minimum.
TEST_CASE("every collective with the smallest chunks", "[cxl]") {
  ScopedEnv chunks("CXLCCL_CHUNK_BYTES", "16K");
  checkAllRanks(3, {1, 7, 1001, 65537}, cxlcclCoherencePool, {cxlcclUint8, cxlcclFloat32, cxlcclFloat64});
}

// Buffers in the pool (cxlcclMemAlloc): every chunk of a send buffer is read where it lies;
// Gather blocks of whole lines from 256 KiB on (65536 and 131072 elements of 4 and 8 bytes) are
// pushed straight into the root's buffer, the others gathered the usual way after the root said
// its buffer will not do.
TEST_CASE("every collective on buffers in the pool", "[cxl]") {
  int n = GENERATE(2, 3);
  INFO(n << " ranks");
  checkAllRanks(n, {1, 7, 1001, 65536, 65537, 300001}, cxlcclCoherencePool, kLargeTypes, false, 1, true);
  checkAllRanks(n, {4099, 131072, 300001}, cxlcclCoherenceFlush, {cxlcclFloat32}, false, 1, true);
}

// Gather and Reduce ask where the root's buffer lies (a round trip) only where it lay in the pool
// at the last such call to that root; the root says so in every pulled call. So a root buffer
// that moves into the pool is pulled once and pushed from the next call on, one that moves out
// is asked about once -- and every result is exact. Pushes show in the root's pool traffic: a
// pushed Gather's root reads nothing but flags, a pushed Reduce's root writes its share of the
// result (a pulled one: nothing but flags).
TEST_CASE("Gather and Reduce push into a root buffer in the pool from the second call on and pull otherwise", "[cxl]") {
  const std::string kind = GENERATE(as<std::string>{}, "Gather", "Reduce");
  INFO(kind);
  const bool reduce = kind == "Reduce";
  ScopedEnv ring("CXLCCL_DIRECT", "off");  // (Gather blocks would be written directly into the root otherwise)
  TempPool pool;
  cxlcclUniqueId id;
  REQUIRE(cxlcclGetUniqueId(&id) == cxlcclSuccess);
  constexpr int kRanks = 3;
  // Floats: Gather blocks of 64 KiB, a Reduce vector of 256 KiB -- pushed where the buffers allow.
  const std::size_t count = reduce ? 65536 : 16384;
  const std::size_t recvCount = reduce ? count : count * kRanks;
  // Per call, which root and whether the buffers lie in the pool (Gather: the root's receive
  // buffer; Reduce: every send buffer too); and whether the call should then push or pull.
  struct Call {
    int root;
    bool inPool;
    bool pushed;
  };
  const std::vector<Call> calls = {{0, false, false}, {0, true, false},  {0, true, true},   {1, true, false}, {0, true, true},
                                   {1, true, true},   {0, false, false}, {0, false, false}, {0, true, false}, {0, true, true}};
  auto valueOf = [count](int rank, std::size_t call, std::size_t i) {
    return static_cast<float>(rank * 100000 + static_cast<int>((call * count + i) % 99991));
  };
  auto expected = [&](std::size_t call, std::size_t i) {  // (sums of integers below 2^24: exact)
    if (!reduce) return valueOf(static_cast<int>(i / count), call, i % count);
    float sum = 0;
    for (int r = 0; r < kRanks; ++r) sum += valueOf(r, call, i);
    return sum;
  };
  std::vector<int> codes = runRanks(kRanks, [&](int rank) {
    cxlcclComm_t comm = nullptr;
    if (cxlcclCommInitRank(&comm, kRanks, id, rank) != cxlcclSuccess) return 1;
    void* recvInPool = nullptr;
    void* sendInPool = nullptr;
    if (cxlcclMemAlloc(&recvInPool, recvCount * sizeof(float)) != cxlcclSuccess) return 1;
    if (cxlcclMemAlloc(&sendInPool, count * sizeof(float)) != cxlcclSuccess) return 1;
    std::vector<float> sendOrdinary(count), recvOrdinary(recvCount);
    int wrong = 0;
    for (std::size_t c = 0; c < calls.size(); ++c) {
      const Call& call = calls[c];
      auto* send = call.inPool && reduce ? static_cast<float*>(sendInPool) : sendOrdinary.data();
      auto* recv = call.inPool ? static_cast<float*>(recvInPool) : recvOrdinary.data();
      for (std::size_t i = 0; i < count; ++i) send[i] = valueOf(rank, c, i);
      std::fill(recv, recv + recvCount, -1.0f);
      cxlcclCommStats_t before{}, after{};
      cxlcclCommStats(comm, &before);
      cxlcclResult_t result = reduce ? cxlcclReduce(send, recv, count, cxlcclFloat, cxlcclSum, call.root, comm, nullptr)
                                     : cxlcclGather(send, recv, count, cxlcclFloat, call.root, comm, nullptr);
      if (result != cxlcclSuccess) return 1;
      cxlcclCommStats(comm, &after);
      if (rank != call.root) continue;
      for (std::size_t i = 0; i < recvCount; ++i) wrong += recv[i] != expected(c, i);
      const std::uint64_t read = after.poolBytesRead - before.poolBytesRead;
      const std::uint64_t written = after.poolBytesWritten - before.poolBytesWritten;
      const bool pushed = reduce ? written >= 1024 : read < 1024;
      if (pushed != call.pushed) {
        std::fprintf(stderr, "call %zu: the root read %llu and wrote %llu bytes in the pool: %s, where %s was due\n", c,
                     static_cast<unsigned long long>(read), static_cast<unsigned long long>(written), pushed ? "pushed" : "pulled",
                     call.pushed ? "pushed" : "pulled");
        ++wrong;
      }
    }
    if (wrong != 0) std::fprintf(stderr, "rank %d: %d wrong\n", rank, wrong);
    cxlcclMemFree(sendInPool);
    cxlcclMemFree(recvInPool);
    return cxlcclCommDestroy(comm) == cxlcclSuccess && wrong == 0 ? 0 : 1;
  });
  for (int rank = 0; rank < kRanks; ++rank) {
    INFO("rank " << rank);
    CHECK(codes[static_cast<std::size_t>(rank)] == 0);
  }
}

// A small AllReduce runs in one phase: each rank publishes its whole vector and reduces every
// rank's into its receive buffer. In place, that must wait until its own vector is published --
// which a large Broadcast just before delays: the root returns once the last chunks are in its
// ring, and the ring's slots free up only as the peer reads them, while the peer's vector for
// the AllReduce may already be there.
TEST_CASE("a small AllReduce in place right after a large Broadcast", "[cxl]") {
  TempPool pool;
  cxlcclUniqueId id;
  REQUIRE(cxlcclGetUniqueId(&id) == cxlcclSuccess);
  constexpr std::size_t kBroadcast = 1 << 20, kSmall = 200;  // floats: 4 MiB, 800 bytes
  constexpr int kRounds = 300, kRanks = 4;                   // more ranks than this machine's cores: preempted anywhere
  std::vector<int> codes = runRanks(kRanks, [&](int rank) {
    cxlcclComm_t comm = nullptr;
    if (cxlcclCommInitRank(&comm, kRanks, id, rank) != cxlcclSuccess) return 1;
    std::vector<float> big(kBroadcast, static_cast<float>(rank)), small(kSmall);
    int wrong = 0;
    for (int round = 0; round < kRounds && wrong == 0; ++round) {
      if (cxlcclBroadcast(big.data(), big.data(), kBroadcast, cxlcclFloat, 0, comm, nullptr) != cxlcclSuccess) return 1;
      for (std::size_t i = 0; i < kSmall; ++i) small[i] = static_cast<float>((rank + 1) * (round + static_cast<int>(i)));
      if (cxlcclAllReduce(small.data(), small.data(), kSmall, cxlcclFloat, cxlcclSum, comm, nullptr) != cxlcclSuccess) return 1;
      for (std::size_t i = 0; i < kSmall; ++i) wrong += small[i] != static_cast<float>(10 * (round + static_cast<int>(i)));
      wrong += big[kBroadcast - 1] != 0.0f;
    }
    if (wrong != 0) std::fprintf(stderr, "rank %d: %d wrong elements\n", rank, wrong);
    return cxlcclCommDestroy(comm) == cxlcclSuccess && wrong == 0 ? 0 : 1;
  });
  for (int rank = 0; rank < kRanks; ++rank) {
    INFO("rank " << rank);
    CHECK(codes[static_cast<std::size_t>(rank)] == 0);
  }
}

// With one rank every collective is a copy of its input: nothing is written to the pool, which
// no one would read (the plans for more ranks published it to a ring as well, at 2.5x the copy's
// time).
TEST_CASE("a communicator of one rank copies each collective's input and writes nothing to the pool", "[cxl]") {
  TempPool pool;
  cxlcclUniqueId id;
  REQUIRE(cxlcclGetUniqueId(&id) == cxlcclSuccess);
  std::vector<int> codes = runRanks(1, [&](int) {
    cxlcclComm_t comm = initRankWith(id, 1, 0, CXLCCL_CONFIG_INITIALIZER);
    if (comm == nullptr) return 1;
    int wrong = 0;
    std::uint64_t seed = 1;
    for (int k = 0; k < 8; ++k) {
      for (bool inPlace : {false, true}) {
        // 300001 floats: several chunks, were they published
        const Case c{static_cast<Kind>(k), cxlcclFloat32, cxlcclSum, 300001, inPlace, 0, seed++};
        cxlcclCommStats_t before{}, after{};
        cxlcclCommStats(comm, &before);
        wrong += runCase(comm, 0, 1, c);
        cxlcclCommStats(comm, &after);
        if (after.poolBytesWritten != before.poolBytesWritten) {
          std::fprintf(stderr, "%s%s: %llu bytes written to the pool\n", kindName(c.kind), inPlace ? " in place" : "",
                       static_cast<unsigned long long>(after.poolBytesWritten - before.poolBytesWritten));
          ++wrong;
        }
      }
    }
    return cxlcclCommDestroy(comm) == cxlcclSuccess && wrong == 0 ? 0 : 3;
  });
  CHECK(codes[0] == 0);
}
