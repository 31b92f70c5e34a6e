#pragma once
// Delta publish (docs/cxlccl.md, "Delta publish"): a Broadcast or AllGather block that a writer
// published before, from the same buffer, crosses the pool as the 64-byte lines that changed
// since. Each writer keeps its last published copy of the buffer in a mirror of its own in the
// pool -- [data | one bit per line: changed in the last call] -- compares the buffer with it,
// writes the changed lines there and announces the mirror's new generation. A reader that holds
// the previous generation in the same receive buffer, untouched since (a hash per block of the
// buffer, as the library left it, says so), copies only the changed lines; any other reader
// copies the whole mirror. Readers tell the writer when they are done, so the mirror is never
// changed under a reader.

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <vector>

#include "Comm.h"
#include "Engine.h"
#include "RegionView.h"

namespace cxlccl {

// How a writer sends its block this call (DeltaAnnouncement::mode).
enum class DeltaSend : std::uint64_t { ring = 0, full = 1, lines = 2 };

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

class DeltaState {
 public:
  DeltaState(Comm& comm, DeltaMode mode);
  ~DeltaState();  // frees the mirrors (after the communicator left: no reader is left)
  DeltaState(const DeltaState&) = delete;
  DeltaState& operator=(const DeltaState&) = delete;

  // Whether a call of `bytes` a block goes through delta publish (the same on every rank).
  bool applies(std::size_t bytes) const;
  const DeltaCounters& counters() const { return counters_; }

  // As a writer: brings the mirror of `src` up to date (or decides to send by ring) and says how.
  Status prepare(int kind, const void* src, std::size_t bytes, bool onGpu, DeltaAnnouncement* out);
  // As a reader, before the announcement: whether `dst` still holds what the last call left in
  // it (false when there was none).
  bool intact(int writer, const void* dst, std::size_t bytes);
  // As a reader, after it: copies writer's block into `dst` from its mirror (lines or whole).
  // `intact` from intact(); `op` copies through the GPU for device buffers (no lines then).
  Status apply(int writer, const DeltaAnnouncement& a, void* dst, std::size_t bytes, bool intact,
               Operation& op, bool onGpu);
  // As a reader of a writer that sent by ring: what `dst` held is not the mirror's any more.
  void forget(int writer, const void* dst, std::size_t bytes);

 private:
  struct Mirror;
  struct Held;
  struct Seen;
  Status mirrorFor(int kind, const void* src, std::size_t bytes, Mirror** out);
  Status viewOf(int writer, const DeltaAnnouncement& a, RegionView** out);
  Held* heldFor(int writer, const void* dst, std::size_t bytes, bool create);
  void compareInto(Mirror& m, const std::byte* src);

  Comm& comm_;
  DeltaMode mode_;
  std::list<Mirror> mirrors_;  // most recently used first
  std::list<Held> held_;
  std::list<Seen> seen_;
  std::uint64_t nextMirror_ = 1;
  std::uint64_t nextGeneration_ = 1;  // unique over this writer's mirrors
  bool loggedNoRoom_ = false;
  DeltaCounters counters_;
};

}  // namespace cxlccl
