#pragma once
// Delta publish (docs/cxlccl.md, "Delta publish"): a Broadcast or AllGather block that a writer
// published before, from the same buffer, crosses the pool as the 64-byte lines that changed
// since. Each writer keeps its last published copy of the buffer in a mirror of its own in the
// pool -- [data | one bit per line: changed in the last call] -- and a hash per KiB of it; it
// compares with the mirror, line by line, the KiBs of the buffer whose hash changed, writes the
// changed lines there and announces the mirror's new generation, a part at a time (below). A
// reader that holds the previous generation in the same receive buffer, untouched since (a hash
// per KiB of the buffer, as the library left it, says so), copies only the changed lines; any
// other reader copies the whole mirror. Readers tell the writer when they are done, so the
// mirror is never changed under a reader.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <vector>

#include "Comm.h"
#include "DeltaAuto.h"
#include "Engine.h"
#include "RegionView.h"

namespace cxlccl {

// What a writer tells its readers, the same size on every rank (one small piece).
struct DeltaAnnouncement {
  std::uint64_t mode = 0;         // DeltaSend
  std::uint64_t ref = 0;          // 1 + the mirror's pool offset
  std::uint64_t regionBytes = 0;  // the mirror's size in the pool
  std::uint64_t mirror = 0;       // the mirror's id, unique per writer and communicator
  std::uint64_t generation = 0;   // of the mirror's data after this call
  std::uint64_t previous = 0;     // lines: the generation a reader must hold to apply them
};

struct DeltaCounters {
  std::uint64_t calls = 0;          // calls that went through delta publish, as a writer or reader
  std::uint64_t linePublishes = 0;  // as a writer: only changed lines sent
  std::uint64_t fullPublishes = 0;  // as a writer: the whole block through the mirror
  std::uint64_t ringPublishes = 0;  // as a writer: the usual way (auto: most lines changed lately)
  std::uint64_t lineApplies = 0;    // as a reader: changed lines applied
  std::uint64_t fullApplies = 0;    // as a reader: the whole mirror copied
  std::uint64_t fallbacks = 0;      // full copies where lines were sent: no copy, or one changed since
  std::uint64_t linesCompared = 0;
  std::uint64_t linesChanged = 0;
};

// A block goes in parts of whole 4 KiB (the same on every rank): the writer announces each part
// once it is in the mirror, so its receivers copy part k while it compares part k + 1.
std::size_t deltaPartBytes(std::size_t bytes);

class DeltaState {
 public:
  DeltaState(Comm& comm, DeltaMode mode);
  ~DeltaState();  // frees the mirrors (after the communicator left: no reader is left)
  DeltaState(const DeltaState&) = delete;
  DeltaState& operator=(const DeltaState&) = delete;

  // Whether a call of `bytes` a block goes through delta publish (the same on every rank).
  bool applies(std::size_t bytes) const;
  const DeltaCounters& counters() const { return counters_; }

  // As the writer: decides how `src` goes this call (by ring, whole through its mirror, or as
  // changed lines) and says so; then brings each part [from, to) of the mirror up to date.
  Status prepare(int kind, const void* src, std::size_t bytes, bool onGpu, DeltaAnnouncement* out);
  void publishPart(const void* src, std::size_t from, std::size_t to);
  void finishPublish();
  // As the writer, once the whole call is done: auto times its calls by ring and as changed
  // lines, and sends by ring while changed lines are slower here (or most lines changed).
  void finishCall();

  // As a receiver, before the announcement: whether `dst` still holds what the last call left
  // in it (false when there was none).
  bool intact(int writer, const void* dst, std::size_t bytes);
  // As a receiver, after it: copies the writer's block into `dst` from its mirror, a part at a
  // time, as lines where `intact` and the generations allow, else whole (`op` copies through
  // the GPU for device buffers).
  struct Receiving;
  Status beginApply(int writer, const DeltaAnnouncement& a, void* dst, std::size_t bytes, bool intact, bool onGpu, Receiving* out);
  Status applyPart(Receiving& r, Operation& op, std::size_t from, std::size_t to);
  void finishApply(Receiving& r);

 private:
  struct Mirror;
  struct Held;
  struct Seen;
  Status mirrorFor(int kind, const void* src, std::size_t bytes, Mirror** out);
  Status viewOf(int writer, const DeltaAnnouncement& a, RegionView** out);
  Held* heldFor(int writer, const void* dst, std::size_t bytes, bool create);
  // A receiver of a writer that sends by ring: what `dst` held is not the mirror's any more.
  void forget(int writer, const void* dst, std::size_t bytes);
  void compareInto(Mirror& m, const std::byte* src, std::size_t from, std::size_t to);
  // auto: after a compare or probe that found most of the block changed, more calls by ring.
  void backOff(Mirror& m);
  void sendingByRing(Mirror& m, const std::byte* src);

  Comm& comm_;
  DeltaMode mode_;
  std::list<Mirror> mirrors_;  // most recently used first
  std::list<Held> held_;
  std::list<Seen> seen_;
  Mirror* writing_ = nullptr;  // the mirror this call publishes through (prepare() to finishPublish())
  Mirror* calling_ = nullptr;  // this call's mirror, by whatever way it sends (prepare() to finishCall())
  DeltaSend callSend_ = DeltaSend::ring;
  std::chrono::steady_clock::time_point callStart_;
  std::size_t changedThisCall_ = 0;
  std::uint64_t nextMirror_ = 1;
  std::uint64_t nextGeneration_ = 1;  // unique over this writer's mirrors
  bool loggedNoRoom_ = false;
  DeltaCounters counters_;
};

struct DeltaState::Receiving {
  DeltaSend send = DeltaSend::ring;
  bool lines = false;  // only the changed lines; else whole
  bool onGpu = false;
  RegionView* view = nullptr;
  Held* held = nullptr;
  std::byte* dst = nullptr;
  std::size_t bytes = 0;
  std::uint64_t mirror = 0;
  std::uint64_t generation = 0;
};

}  // namespace cxlccl
