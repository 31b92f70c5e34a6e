// An interval's moves in turns: requests cut into pieces on 2 MiB boundaries, and each
// promotion after the demotions that freed its room.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "mtm/daemon/MoveTurns.h"

using namespace mtm;
using mtm::daemon::cutIntoTurns;
using mtm::daemon::runInTurns;

namespace {

constexpr uint64_t kMiB = 1 << 20;
constexpr uint64_t kBase = 0x7f0000000000;

MoveRequest request(MoveKind kind, std::vector<AddressRange> ranges) {
  MoveRequest r;
  r.pid = 42;
  r.kind = kind;
  r.toNode = kind == MoveKind::Promotion ? 0 : 1;
  r.stayNodes = {r.toNode};
  r.splitPartialThps = true;
  r.ranges = std::move(ranges);
  return r;
}

uint64_t bytesOf(const std::vector<MoveRequest>& rs) {
  uint64_t bytes = 0;
  for (const auto& r : rs) bytes += mtm::bytesOf(r.ranges);
  return bytes;
}

// Says what it was asked, in order ("D 8" / "P 8": a demotion or promotion of 8 MiB), and
// reports every page moved to the request's node.
class RecordingMover final : public migrate::Mover {
 public:
  std::vector<std::string> calls;
  MoveStats execute(const std::vector<MoveRequest>& requests, const ProgressFn&) override {
    MoveStats s;
    for (size_t i = 0; i < requests.size(); ++i) {
      const auto& r = requests[i];
      const uint64_t bytes = bytesOf({r});
      calls.push_back(std::string(r.kind == MoveKind::Promotion ? "P " : "D ") + std::to_string(bytes / kMiB));
      s.pagesRequested += bytes / kPageSize;
      s.pagesMoved += bytes / kPageSize;
      s.landedNodes.push_back(r.toNode);
      s.landings.push_back({i, r.ranges.front().start, r.ranges.back().end, r.toNode});
    }
    return s;
  }
};

}  // namespace

TEST_CASE("move turns: requests are cut into pieces of at most 8 MiB, each cut on a 2 MiB boundary", "[daemon]") {
  // 20 MiB from 1 MiB past a 2 MiB boundary, then 3 MiB, then 64 KiB: pieces of 7 + 8 MiB
  // (cuts at 8 and 16 MiB), then the last 5 MiB with the 3 MiB (8 in all), then the 64 KiB.
  const auto r = request(
      MoveKind::Promotion,
      {{kBase + 1 * kMiB, kBase + 21 * kMiB}, {kBase + 40 * kMiB, kBase + 43 * kMiB}, {kBase + 50 * kMiB, kBase + 50 * kMiB + 65536}});
  const auto pieces = cutIntoTurns({r});
  REQUIRE(pieces.size() == 4);
  CHECK(pieces[0].ranges == std::vector<AddressRange>{{kBase + 1 * kMiB, kBase + 8 * kMiB}});
  CHECK(pieces[1].ranges == std::vector<AddressRange>{{kBase + 8 * kMiB, kBase + 16 * kMiB}});
  CHECK(pieces[2].ranges == std::vector<AddressRange>{{kBase + 16 * kMiB, kBase + 21 * kMiB}, {kBase + 40 * kMiB, kBase + 43 * kMiB}});
  CHECK(pieces[3].ranges == std::vector<AddressRange>{{kBase + 50 * kMiB, kBase + 50 * kMiB + 65536}});
  for (const auto& p : pieces) {
    CHECK(bytesOf({p}) <= 8 * kMiB);
    CHECK(p.pid == r.pid);
    CHECK(p.toNode == r.toNode);
    CHECK(p.stayNodes == r.stayNodes);
    CHECK(p.kind == r.kind);
    CHECK(p.splitPartialThps);
  }
  CHECK(bytesOf(pieces) == bytesOf({r}));
}

TEST_CASE("move turns: a range with no 2 MiB boundary in a piece's room starts the next piece", "[daemon]") {
  // 7.5 MiB, then 3 MiB from 1 MiB past a boundary: the half MiB left in the first piece holds
  // no boundary to cut at, so the second range goes whole into the next piece.
  const auto r = request(MoveKind::Demotion, {{kBase, kBase + 7 * kMiB + kMiB / 2}, {kBase + 33 * kMiB, kBase + 36 * kMiB}});
  const auto pieces = cutIntoTurns({r});
  REQUIRE(pieces.size() == 2);
  CHECK(pieces[0].ranges == std::vector<AddressRange>{{kBase, kBase + 7 * kMiB + kMiB / 2}});
  CHECK(pieces[1].ranges == std::vector<AddressRange>{{kBase + 33 * kMiB, kBase + 36 * kMiB}});
}

TEST_CASE("move turns: each promotion waits for the demotions that free its room, and none waits longer", "[daemon]") {
  // A swap of 24 MiB down and 24 MiB up, then 8 MiB more up with nothing left to go down.
  const auto down = cutIntoTurns({request(MoveKind::Demotion, {{kBase, kBase + 24 * kMiB}})});
  const auto up = cutIntoTurns({request(MoveKind::Promotion, {{kBase + 64 * kMiB, kBase + 96 * kMiB}})});
  RecordingMover mover;
  MoveStats demoted, promoted;
  runInTurns(mover, down, up, demoted, promoted);
  CHECK(mover.calls == std::vector<std::string>{"D 8", "P 8", "D 8", "P 8", "D 8", "P 8", "P 8"});
  CHECK(demoted.pagesMoved == 24 * kMiB / kPageSize);
  CHECK(promoted.pagesMoved == 32 * kMiB / kPageSize);
  // Landings name the piece they came from, in each list's order.
  REQUIRE(promoted.landings.size() == 4);
  for (size_t i = 0; i < 4; ++i) {
    CHECK(promoted.landings[i].request == i);
    CHECK(promoted.landings[i].start == up[i].ranges.front().start);
  }
}

TEST_CASE("move turns: promotions alone, or demotions alone, all run", "[daemon]") {
  const auto pieces = cutIntoTurns({request(MoveKind::Promotion, {{kBase, kBase + 16 * kMiB}})});
  RecordingMover mover;
  MoveStats demoted, promoted;
  runInTurns(mover, {}, pieces, demoted, promoted);
  CHECK(mover.calls == std::vector<std::string>{"P 8", "P 8"});
  RecordingMover down;
  runInTurns(down, cutIntoTurns({request(MoveKind::Demotion, {{kBase, kBase + 4 * kMiB}})}), {}, demoted, promoted);
  CHECK(down.calls == std::vector<std::string>{"D 4"});
  CHECK(demoted.pagesMoved == 4 * kMiB / kPageSize);
}
