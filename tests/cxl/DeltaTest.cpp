// Delta publish: Broadcast and AllGather stay bit-exact over thousands of random steps with
// random changed fractions, in every coherence mode, when a receiver writes its buffer between
// calls (it must fall back to a whole copy) and when it receives into a buffer it never had; the
// pool traffic counters are exact.

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "Ranks.h"

using namespace cxlccl::test;

namespace {

cxlcclComm_t initDelta(const cxlcclUniqueId& id, int n, int rank, int coherence, int delta) {
  cxlcclConfig_t config = CXLCCL_CONFIG_INITIALIZER;
  config.coherence = coherence;
  config.delta = delta;
  config.timeoutMs = 60000;
  return initRankWith(id, n, rank, config);
}

// Runs `body(rank, id)` on n ranks sharing a pool of their own; every rank must return 0.
void checkRanks(int n, const std::function<int(int rank, const cxlcclUniqueId& id)>& body, int seconds = 120) {
  TempPool pool;
  cxlcclUniqueId id;
  REQUIRE(cxlcclGetUniqueId(&id) == cxlcclSuccess);
  std::vector<int> codes = runRanks(
      n, [&](int rank) { return body(rank, id); }, seconds);
  for (int rank = 0; rank < n; ++rank) {
    INFO("rank " << rank << " of " << n);
    CHECK(codes[static_cast<std::size_t>(rank)] == 0);
  }
}

// Every rank models every writer's send buffer with the same random generator, so each knows
// what every block must hold after each call.
struct Step {
  bool allGather;
  int root;
  double changed;  // share of lines a writer changes
  int scribbler;   // a reader that writes its receive buffer before the call (-1: none)
  int recvSlot;    // which of two receive buffers the call uses
};

int runSteps(int rank, int n, const cxlcclUniqueId& id, int coherence, int delta, int steps) {
  cxlcclComm_t comm = initDelta(id, n, rank, coherence, delta);
  if (comm == nullptr) return 1;
  // Blocks of whole lines plus a tail: one over the minimum size of delta publish, one that goes
  // in three parts.
  const std::size_t sizes[2] = {(64 << 10) + 1000 + 37, (2 << 20) + 3 * 4096 + 37};
  struct Size {
    std::vector<std::vector<unsigned char>> model;  // every writer's send buffer
    std::vector<unsigned char> send;
    std::vector<std::vector<unsigned char>> recv;  // two receive buffers
  };
  std::vector<Size> state(2);
  for (int z = 0; z < 2; ++z) {
    const std::size_t bytes = sizes[z];
    Size& st = state[static_cast<std::size_t>(z)];
    st.model.assign(static_cast<std::size_t>(n), std::vector<unsigned char>(bytes));
    for (int w = 0; w < n; ++w)
      for (std::size_t i = 0; i < bytes; ++i) st.model[static_cast<std::size_t>(w)][i] = static_cast<unsigned char>(i * 7 + w);
    st.send.resize(bytes);
    st.recv.assign(2, std::vector<unsigned char>(bytes * static_cast<std::size_t>(n)));
  }
  std::mt19937_64 shared(42);
  std::mt19937_64 own(1000 + static_cast<std::uint64_t>(rank));
  const double fractions[] = {0, 0.0005, 0.01, 0.1, 0.5, 1.0};
  int failures = 0;
  for (int s = 0; s < steps && failures == 0; ++s) {
    Step step{shared() % 2 == 0, static_cast<int>(shared() % static_cast<std::uint64_t>(n)), fractions[shared() % 6],
              shared() % 5 == 0 ? static_cast<int>(shared() % static_cast<std::uint64_t>(n)) : -1, shared() % 8 == 0 ? 1 : 0};
    const int z = shared() % 4 == 0 ? 1 : 0;
    const std::size_t bytes = sizes[z];
    Size& st = state[static_cast<std::size_t>(z)];
    for (int w = 0; w < n; ++w) {
      if (!step.allGather && w != step.root) continue;
      auto& m = st.model[static_cast<std::size_t>(w)];
      // Changed lines: one byte each, at random; a share of 1 changes every line.
      const std::size_t lines = (bytes + 63) / 64;
      if (step.changed >= 1) {
        for (std::size_t l = 0; l < lines; ++l) m[std::min(bytes - 1, l * 64 + shared() % 64)] ^= 0x11;
      } else {
        auto changes = static_cast<std::size_t>(step.changed * static_cast<double>(lines));
        for (std::size_t c = 0; c < changes; ++c) m[shared() % bytes] ^= static_cast<unsigned char>(1 + shared() % 255);
      }
    }
    std::vector<unsigned char>& out = st.recv[static_cast<std::size_t>(step.recvSlot)];
    if (step.scribbler == rank) out[own() % out.size()] ^= 0x5a;  // the application writes it
    cxlcclResult_t result;
    if (step.allGather) {
      std::memcpy(st.send.data(), st.model[static_cast<std::size_t>(rank)].data(), bytes);
      result = cxlcclAllGather(st.send.data(), out.data(), bytes, cxlcclUint8, comm, nullptr);
    } else {
      if (rank == step.root) std::memcpy(st.send.data(), st.model[static_cast<std::size_t>(rank)].data(), bytes);
      result = cxlcclBroadcast(st.send.data(), out.data(), bytes, cxlcclUint8, step.root, comm, nullptr);
    }
    if (result != cxlcclSuccess) {
      std::fprintf(stderr, "rank %d step %d: %s\n", rank, s, cxlcclGetLastError(comm));
      return 1;
    }
    for (int w = 0; w < n; ++w) {
      if (!step.allGather && w != step.root) continue;
      const unsigned char* got = out.data() + (step.allGather ? static_cast<std::size_t>(w) * bytes : 0);
      if (std::memcmp(got, st.model[static_cast<std::size_t>(w)].data(), bytes) != 0) {
        std::fprintf(stderr, "rank %d step %d (%s of %zu bytes, writer %d, %.4f changed, scribbler %d): wrong data\n", rank, s,
                     step.allGather ? "AllGather" : "Broadcast", bytes, w, step.changed, step.scribbler);
        ++failures;
      }
    }
  }
  cxlcclCommStats_t stats{};
  cxlcclCommStats(comm, &stats);
  // Every path was taken: lines applied, and whole copies where a receiver wrote its buffer.
  if (failures == 0 && (stats.deltaLineApplies == 0 || stats.deltaFallbacks == 0 || stats.deltaLinePublishes == 0)) {
    std::fprintf(stderr, "rank %d: a path was never taken: %llu line applies, %llu fallbacks, %llu line publishes\n", rank,
                 static_cast<unsigned long long>(stats.deltaLineApplies), static_cast<unsigned long long>(stats.deltaFallbacks),
                 static_cast<unsigned long long>(stats.deltaLinePublishes));
    ++failures;
  }
  if (cxlcclCommDestroy(comm) != cxlcclSuccess) ++failures;
  return failures == 0 ? 0 : 1;
}

void checkSteps(int n, int coherence, int delta, int steps) {
  checkRanks(
      n, [&](int rank, const cxlcclUniqueId& id) { return runSteps(rank, n, id, coherence, delta, steps); }, 600);
}

}  // namespace

TEST_CASE("delta publish is bit-exact over random steps", "[cxl]") {
  int n = GENERATE(2, 3, 4);
  int delta = GENERATE(static_cast<int>(cxlcclDeltaOn), static_cast<int>(cxlcclDeltaAuto));
  INFO(n << " ranks, delta " << delta);
  checkSteps(n, cxlcclCoherencePool, delta, 400);
}

TEST_CASE("delta publish in the non-coherence simulation and with flushes", "[cxl]") {
  int n = GENERATE(2, 3);
  int coherence = GENERATE(static_cast<int>(cxlcclCoherenceSimulate), static_cast<int>(cxlcclCoherenceFlush));
  INFO(n << " ranks, coherence " << coherence);
  checkSteps(n, coherence, cxlcclDeltaOn, 200);
}

// The counters are exact: the first call sends the whole block, the next the changed lines.
TEST_CASE("delta publish counts the bytes it moves through the pool", "[cxl]") {
  constexpr std::size_t kBytes = 1 << 20, kLines = kBytes / 64, kBits = kLines / 8;
  checkRanks(2, [&](int rank, const cxlcclUniqueId& id) {
    cxlcclComm_t comm = initDelta(id, 2, rank, cxlcclCoherencePool, cxlcclDeltaOn);
    if (comm == nullptr) return 1;
    std::vector<unsigned char> buffer(kBytes, 1);
    cxlcclCommStats_t before{}, first{}, second{};
    cxlcclCommStats(comm, &before);
    if (cxlcclBroadcast(buffer.data(), buffer.data(), kBytes, cxlcclUint8, 0, comm, nullptr) != cxlcclSuccess) return 2;
    cxlcclCommStats(comm, &first);
    if (rank == 0)
      for (std::size_t line = 0; line < 10; ++line) buffer[line * 4096 + 3] = 7;  // 10 lines change
    if (cxlcclBroadcast(buffer.data(), buffer.data(), kBytes, cxlcclUint8, 0, comm, nullptr) != cxlcclSuccess) return 3;
    cxlcclCommStats(comm, &second);
    // Two runs of changed lines in one hashed block of the receiver, then a call with none:
    // the receiver's buffer must still count as untouched (lines applied, no whole copy).
    if (rank == 0) buffer[5] = buffer[2 * 64 + 5] = 9;
    for (int call = 0; call < 2; ++call)
      if (cxlcclBroadcast(buffer.data(), buffer.data(), kBytes, cxlcclUint8, 0, comm, nullptr) != cxlcclSuccess) return 4;
    cxlcclCommStats_t fourth{};
    cxlcclCommStats(comm, &fourth);
    int bad = 0;
    auto expect = [&](const char* what, std::uint64_t got, std::uint64_t want) {
      if (got == want) return;
      std::fprintf(stderr, "rank %d: %s: %llu, expected %llu\n", rank, what, static_cast<unsigned long long>(got),
                   static_cast<unsigned long long>(want));
      ++bad;
    };
    // (Each call also moves two 8-byte words through slot headers: the announcement's 48 bytes
    // and the done word, inline.)
    if (rank == 0) {
      expect("first call written", first.poolBytesWritten - before.poolBytesWritten, kBytes + 48);
      expect("second call written", second.poolBytesWritten - first.poolBytesWritten, 10 * 64 + kBits + 48);
      // Read from the mirror: only the ten KiB blocks whose hash changed.
      expect("second call read", second.poolBytesRead - first.poolBytesRead, 10 * 1024 + 8);
      expect("lines changed", second.deltaLinesChanged, 10);
      expect("line publishes", second.deltaLinePublishes, 1);
    } else {
      expect("first call read", first.poolBytesRead - before.poolBytesRead, kBytes + 48);
      expect("second call read", second.poolBytesRead - first.poolBytesRead, 10 * 64 + kBits + 48);
      expect("line applies", second.deltaLineApplies, 1);
      expect("line applies after four calls", fourth.deltaLineApplies, 3);
      expect("whole copies where lines were sent", fourth.deltaFallbacks, 0);
      if (buffer[3] != 7 || buffer[9 * 4096 + 3] != 7 || buffer[5] != 9 || buffer[2 * 64 + 5] != 9 || buffer[64] != 1) ++bad;
    }
    if (cxlcclCommDestroy(comm) != cxlcclSuccess) ++bad;
    return bad;
  });
}

// auto: a writer whose buffer changes everywhere sends the usual way, for longer after each
// probe that finds it so, and through its mirror again once changes are few. (By the share of
// lines changed alone: the calls' times, which auto weighs too, would make the counts depend on
// the machine.)
TEST_CASE("delta publish in auto sends by ring while most lines change", "[cxl]") {
  ScopedEnv byShareOnly("CXLCCL_DELTA_TIMED", "0");
  checkRanks(2, [&](int rank, const cxlcclUniqueId& id) {
    cxlcclComm_t comm = initDelta(id, 2, rank, cxlcclCoherencePool, cxlcclDeltaAuto);
    if (comm == nullptr) return 1;
    std::vector<float> buffer(1 << 18);
    // Both ranks know what rank 0 sends: the last result, changed everywhere or in one element.
    auto step = [&](int call, bool everywhere) {
      std::vector<float> expected = buffer;
      if (everywhere)
        for (std::size_t i = 0; i < expected.size(); ++i) expected[i] = static_cast<float>(call * 1000003 + i);
      else
        expected[static_cast<std::size_t>(call) * 999 % expected.size()] += 1;
      if (rank == 0) buffer = expected;
      if (cxlcclBroadcast(buffer.data(), buffer.data(), buffer.size(), cxlcclFloat32, 0, comm, nullptr) != cxlcclSuccess) return false;
      return buffer == expected;
    };
    int bad = 0;
    auto expect = [&](const char* when, std::uint64_t full, std::uint64_t lines, std::uint64_t ring) {
      cxlcclCommStats_t stats{};
      cxlcclCommStats(comm, &stats);
      if (rank != 0 || (stats.deltaFullPublishes == full && stats.deltaLinePublishes == lines && stats.deltaRingPublishes == ring)) return;
      std::fprintf(stderr, "%s: full %llu lines %llu ring %llu, expected %llu %llu %llu\n", when,
                   static_cast<unsigned long long>(stats.deltaFullPublishes), static_cast<unsigned long long>(stats.deltaLinePublishes),
                   static_cast<unsigned long long>(stats.deltaRingPublishes), static_cast<unsigned long long>(full),
                   static_cast<unsigned long long>(lines), static_cast<unsigned long long>(ring));
      ++bad;
    };
    for (int call = 0; call < 12; ++call)
      if (!step(call, true)) return 2;
    // Whole, compared; 1 by ring, 2 probing; 2 by ring, 2 probing; 3 (of 4) by ring.
    expect("everything changing", 1, 1, 10);
    for (int call = 12; call < 32; ++call)
      if (!step(call, false)) return 3;
    // 1 by ring, 2 probing (few blocks changed), whole, then 16 compared.
    expect("then a line a call", 2, 17, 13);
    if (cxlcclCommDestroy(comm) != cxlcclSuccess) ++bad;
    return bad;
  });
}

// auto with its timing (the default) over calls whose few changed lines may or may not pay on
// this machine: whichever way each call goes, every result is exact, and every call is counted
// once. (Which way is timing's to say, and so the machine's: AutoTiming's unit test checks the
// choice on given times.) Untimed, every call after the first goes as lines.
TEST_CASE("delta publish in auto with and without timing", "[cxl]") {
  const bool timed = GENERATE(true, false);
  ScopedEnv setting("CXLCCL_DELTA_TIMED", timed ? "1" : "0");
  checkRanks(2, [&](int rank, const cxlcclUniqueId& id) {
    cxlcclComm_t comm = initDelta(id, 2, rank, cxlcclCoherencePool, cxlcclDeltaAuto);
    if (comm == nullptr) return 1;
    std::vector<std::uint32_t> buffer(1 << 20), expected(buffer.size());
    std::mt19937_64 random(7);  // the same changes on both ranks
    int bad = 0;
    constexpr int kCalls = 40;
    for (int call = 0; call < kCalls; ++call) {
      for (std::size_t line = 0; line < expected.size() / 16; ++line)
        if (random() % 100 < 4) expected[line * 16 + random() % 16] += 1;
      if (rank == 0) buffer = expected;
      if (cxlcclBroadcast(buffer.data(), buffer.data(), buffer.size(), cxlcclUint32, 0, comm, nullptr) != cxlcclSuccess) return 2;
      if (buffer != expected) ++bad;
    }
    cxlcclCommStats_t stats{};
    cxlcclCommStats(comm, &stats);
    if (rank == 0) {
      std::fprintf(stderr, "%s: full %llu lines %llu ring %llu\n", timed ? "timed" : "untimed",
                   static_cast<unsigned long long>(stats.deltaFullPublishes), static_cast<unsigned long long>(stats.deltaLinePublishes),
                   static_cast<unsigned long long>(stats.deltaRingPublishes));
      if (stats.deltaFullPublishes + stats.deltaLinePublishes + stats.deltaRingPublishes != kCalls) ++bad;
      if (!timed && (stats.deltaRingPublishes != 0 || stats.deltaLinePublishes != kCalls - 1)) ++bad;
    }
    if (cxlcclCommDestroy(comm) != cxlcclSuccess) ++bad;
    return bad;
  });
}

// Ranks that disagree on delta publish get an error, not a hang or wrong data.
TEST_CASE("ranks that disagree on delta publish fail the call", "[cxl]") {
  checkRanks(
      2,
      [&](int rank, const cxlcclUniqueId& id) {
        cxlcclConfig_t config = CXLCCL_CONFIG_INITIALIZER;
        config.delta = rank == 0 ? cxlcclDeltaOn : cxlcclDeltaOff;
        config.timeoutMs = 5000;
        cxlcclComm_t comm = initRankWith(id, 2, rank, config);
        if (comm == nullptr) return 1;
        std::vector<unsigned char> buffer(1 << 20, static_cast<unsigned char>(rank));
        cxlcclResult_t result = cxlcclBroadcast(buffer.data(), buffer.data(), buffer.size(), cxlcclUint8, 0, comm, nullptr);
        std::string message = cxlcclGetLastError(comm);
        cxlcclCommAbort(comm);
        if (result == cxlcclSuccess) return 2;
        // The receiver sees the other piece; the writer learns it from the receiver's abort.
        if (rank == 1 && message.find("different") == std::string::npos) {
          std::fprintf(stderr, "rank 1: %s\n", message.c_str());
          return 3;
        }
        return 0;
      },
      60);
}
