// Every collective x datatype x op x size x in-place, on 1..8 ranks as processes sharing a pool
// on /dev/shm, each result checked element by element against a reference; then the same in the
// non-coherence simulation, where a missing flush or invalidate gives wrong data.

#include <catch2/catch.hpp>

#include <cstdio>
#include <cstring>
#include <vector>

#include "Ranks.h"

using namespace cxlccl::test;

namespace {

enum class Kind { allGather, broadcast, gather, scatter, reduce, allReduce, reduceScatter, allToAll };
const char* kindName(Kind k) {
  static const char* const kNames[] = {"AllGather", "Broadcast", "Gather", "Scatter",
                                       "Reduce", "AllReduce", "ReduceScatter", "AllToAll"};
  return kNames[static_cast<int>(k)];
}
bool reduces(Kind k) { return k == Kind::reduce || k == Kind::allReduce || k == Kind::reduceScatter; }

struct Case {
  Kind kind;
  cxlcclDataType_t type;
  cxlcclRedOp_t op;
  std::size_t count;
  bool inPlace;
  int root;
  std::uint64_t seed;
};

// Runs one case on this rank and checks its result; 0 when right.
int runCase(cxlcclComm_t comm, int rank, int n, const Case& c) {
  const std::size_t eb = elementBytes(c.type);
  const std::size_t count = c.count;
  const std::size_t nsz = static_cast<std::size_t>(n);
  const bool prod = c.op == cxlcclProd && reduces(c.kind);
  // Buffer sizes in elements.
  std::size_t sendCount = count, recvCount = count;
  switch (c.kind) {
    case Kind::allGather: case Kind::gather: recvCount = count * nsz; break;
    case Kind::scatter: sendCount = count * nsz; break;
    case Kind::reduceScatter: sendCount = count * nsz; break;
    case Kind::allToAll: sendCount = recvCount = count * nsz; break;
    default: break;
  }
  auto in = [&](std::size_t r, std::size_t i) {
    return inputValue(static_cast<int>(r), i, c.seed, prod, c.type);
  };
  std::vector<std::int64_t> mine(sendCount);
  for (std::size_t i = 0; i < sendCount; ++i) mine[i] = in(static_cast<std::size_t>(rank), i);
  std::vector<std::int64_t> firstBlock(mine.begin(), mine.begin() + static_cast<std::ptrdiff_t>(count));
  // Buffers are reused from case to case: fresh ones would spend the time in page faults.
  static std::vector<unsigned char> sendStore, recvStore;
  sendStore.resize(std::max(sendStore.size(), sendCount * eb + 1));
  recvStore.resize(std::max(recvStore.size(), std::max(recvCount, sendCount) * eb + 1));
  void* send = sendStore.data();
  void* recv = recvStore.data();
  auto* recvBytes = static_cast<unsigned char*>(recv);
  fill(send, c.type, mine);
  std::memset(recv, 0xa5, std::max(recvCount, sendCount) * eb);
  bool root = rank == c.root;
  if (c.inPlace) {
    switch (c.kind) {
      case Kind::allGather:
        send = recvBytes + rank * count * eb;
        fill(send, c.type, firstBlock);
        break;
      case Kind::gather:
        if (root) {
          send = recvBytes + rank * count * eb;
          fill(send, c.type, firstBlock);
        }
        break;
      case Kind::scatter:
        if (root) recv = static_cast<unsigned char*>(send) + rank * count * eb;
        break;
      case Kind::reduceScatter:
        recv = static_cast<unsigned char*>(send) + rank * count * eb;
        break;
      default:  // broadcast, reduce, allReduce, allToAll: one buffer
        fill(recv, c.type, mine);
        send = recv;
        break;
    }
  }
  cxlcclResult_t result = cxlcclSuccess;
  switch (c.kind) {
    case Kind::allGather: result = cxlcclAllGather(send, recv, count, c.type, comm, nullptr); break;
    case Kind::broadcast: result = cxlcclBroadcast(send, recv, count, c.type, c.root, comm, nullptr); break;
    case Kind::gather: result = cxlcclGather(send, recv, count, c.type, c.root, comm, nullptr); break;
    case Kind::scatter: result = cxlcclScatter(send, recv, count, c.type, c.root, comm, nullptr); break;
    case Kind::reduce: result = cxlcclReduce(send, recv, count, c.type, c.op, c.root, comm, nullptr); break;
    case Kind::allReduce: result = cxlcclAllReduce(send, recv, count, c.type, c.op, comm, nullptr); break;
    case Kind::reduceScatter: result = cxlcclReduceScatter(send, recv, count, c.type, c.op, comm, nullptr); break;
    case Kind::allToAll: result = cxlcclAllToAll(send, recv, count, c.type, comm, nullptr); break;
  }
  if (result != cxlcclSuccess) {
    std::fprintf(stderr, "rank %d: %s: %s\n", rank, kindName(c.kind), cxlcclGetLastError(comm));
    return 1;
  }
  if ((c.kind == Kind::gather || c.kind == Kind::reduce) && !root) return 0;
  auto reduced = [&](std::size_t i) {
    std::int64_t acc = in(0, i);
    for (std::size_t r = 1; r < nsz; ++r) acc = reduceRef(acc, in(r, i), c.op, c.type);
    return acc;
  };
  std::vector<std::int64_t> expected(c.kind == Kind::reduceScatter ? count : recvCount);
  for (std::size_t i = 0; i < expected.size(); ++i) {
    std::size_t block = i / count, at = i % count;
    switch (c.kind) {
      case Kind::allGather: case Kind::gather: expected[i] = in(block, at); break;
      case Kind::broadcast: expected[i] = in(static_cast<std::size_t>(c.root), i); break;
      case Kind::scatter: expected[i] = in(static_cast<std::size_t>(c.root), rank * count + i); break;
      case Kind::allToAll: expected[i] = in(block, rank * count + at); break;
      case Kind::reduce: case Kind::allReduce: expected[i] = reduced(i); break;
      case Kind::reduceScatter: expected[i] = reduced(rank * count + i); break;
    }
  }
  long long bad = firstMismatch(recv, c.type, expected);
  if (bad >= 0) {
    std::fprintf(stderr, "rank %d of %d: %s type %d op %d count %zu%s root %d: element %lld wrong\n",
                 rank, n, kindName(c.kind), static_cast<int>(c.type), static_cast<int>(c.op), count,
                 c.inPlace ? " in place" : "", c.root, bad);
    return 1;
  }
  return 0;
}

// Every case for the given sizes on one communicator of n ranks.
// `sumOnly`: reductions with sum alone and out of place alone (the largest sizes).
int runAll(int rank, int n, const cxlcclUniqueId& id, const std::vector<std::size_t>& counts,
           int coherence, const std::vector<cxlcclDataType_t>& types, bool sumOnly) {
  cxlcclConfig_t config = CXLCCL_CONFIG_INITIALIZER;
  config.coherence = coherence;
  config.timeoutMs = 60000;
  cxlcclComm_t comm = nullptr;
  if (cxlcclCommInitRankConfig(&comm, n, id, rank, &config) != cxlcclSuccess) {
    std::fprintf(stderr, "rank %d: init: %s\n", rank, cxlcclGetLastError(nullptr));
    return 1;
  }
  int failures = 0;
  std::uint64_t seed = 1;
  for (std::size_t count : counts) {
    for (int k = 0; k < 8; ++k) {
      Kind kind = static_cast<Kind>(k);
      for (cxlcclDataType_t type : types) {
        int ops = reduces(kind) && !sumOnly ? cxlcclNumOps : 1;
        for (int o = 0; o < ops; ++o) {
          for (int inPlace = 0; inPlace < (sumOnly ? 1 : 2); ++inPlace) {
            Case c{kind, type, static_cast<cxlcclRedOp_t>(o), count,
                   inPlace == 1, static_cast<int>(seed % static_cast<std::uint64_t>(n)), seed};
            ++seed;
            failures += runCase(comm, rank, n, c);
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

void checkAllRanks(int n, const std::vector<std::size_t>& counts, int coherence,
                   const std::vector<cxlcclDataType_t>& types = allTypes(), bool sumOnly = false) {
  TempPool pool;
  cxlcclUniqueId id;
  REQUIRE(cxlcclGetUniqueId(&id) == cxlcclSuccess);
  std::vector<int> codes = runRanks(n, [&](int rank) { return runAll(rank, n, id, counts, coherence, types, sumOnly); }, 600);
  for (int rank = 0; rank < n; ++rank) {
    INFO("rank " << rank << " of " << n);
    CHECK(codes[static_cast<std::size_t>(rank)] == 0);
  }
}

}  // namespace

// Sizes: 1 element, inline in the doorbell (<= 96 bytes), odd counts, several chunks (256 KiB
// chunks in 8 slots: 300001 elements of 8 bytes wrap the ring). The largest size runs for one
// type per element size: the types differ only in their arithmetic, covered by the others.
const std::vector<std::size_t> kCounts{1, 7, 1001, 65537};
const std::vector<std::size_t> kLargeCounts{300001};
const std::vector<cxlcclDataType_t> kLargeTypes{cxlcclUint8, cxlcclBfloat16, cxlcclFloat32, cxlcclInt64};

#define CXL_RANKS_TEST(n)                                                                       \
  TEST_CASE("every collective x type x op x size on " #n " ranks", "[cxl]") {                 \
    checkAllRanks(n, kCounts, cxlcclCoherencePool);                                             \
    checkAllRanks(n, kLargeCounts, cxlcclCoherencePool, kLargeTypes);                           \
  }
CXL_RANKS_TEST(1)
CXL_RANKS_TEST(2)
CXL_RANKS_TEST(3)
CXL_RANKS_TEST(4)
CXL_RANKS_TEST(5)
CXL_RANKS_TEST(8)

// The top of the size range: 64 MiB per rank's buffer, every collective, on 2 ranks.
TEST_CASE("every collective at 64 MiB on 2 ranks", "[cxl]") {
  checkAllRanks(2, {16u << 20}, cxlcclCoherencePool, {cxlcclFloat32}, true);
}

TEST_CASE("every collective in the non-coherence simulation", "[cxl]") {
  int n = GENERATE(2, 3, 5);
  INFO(n << " ranks");
  checkAllRanks(n, kCounts, cxlcclCoherenceSimulate);
}

TEST_CASE("every collective with cache-line flushes", "[cxl]") {
  checkAllRanks(3, {5, 4099}, cxlcclCoherenceFlush);
}
