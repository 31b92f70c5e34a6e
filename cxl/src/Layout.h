#pragma once
// Where everything sits in a communicator's region. Every flag has a line of its own
// (`lineBytes`, a multiple of 64) written by exactly one rank:
//   header                      rank 0, once, at creation
//   rank line r                 rank r: state, heartbeat, pid, host
//   doorbell w                  rank w: the tag of the last call its ring published (a reader
//                               waiting on a chunk that call never publishes learns that the
//                               ranks disagree)
//   ack (r, w)                  rank r: last sequence of w's ring it has finished reading
//   p2p doorbell / ack (w, r)   the same for the ring rank w keeps for rank r alone
//   slot headers                the writer: one per chunk in flight on each of its rings -- the
//                               chunk's sequence (written last: its doorbell, which readers
//                               poll), tag, size and, for a small chunk, the data inline. A ring
//                               has more headers than data slots (ringHeaders(): at least 64;
//                               kP2pHeaders), so it holds more small messages than large ones.
// then, 4 KiB-aligned, each rank's ring of `chunks` slots of `chunkBytes`, and its per-peer p2p
// rings of kP2pChunks slots of p2pChunkBytes() (Layout.cpp). A pair's ring must hold what is sent
// while the reader's acknowledgements come back: on a 2-core EPYC, Send/Recv of 256 KiB-4 MiB
// carried 6.5 GB/s with 128 KiB a pair, 13-17 GB/s with 1 MiB.

#include <cstddef>
#include <cstdint>
#include <string>

#include "Status.h"

namespace cxlccl {

inline constexpr std::uint64_t kCommMagic = 0x344d4d4f434c4343ull;  // "CCLCOMM4": p2p rings sized by the ranks
inline constexpr int kMaxRanks = 64;
inline constexpr int kP2pChunks = 4;
inline constexpr int kP2pHeaders = 16;
inline constexpr int kMinRingHeaders = 64;

// Field offsets inside lines.
namespace field {
// header
inline constexpr std::size_t magic = 0, nonceHigh = 8, nranks = 16, lineBytes = 24, chunkBytes = 32, chunks = 40, nonceLow = 48;
// rank line; `writing`, where lines are long enough (lineBytes from 128): the call (op index)
// in which this rank writes into a peer's buffer directly, 0 otherwise (Comm::awaitWriters)
inline constexpr std::size_t state = 0, heartbeat = 8, pid = 16, host = 24, kHostBytes = 40, writing = 64;
// slot header (and the doorbell's tag); the tag is (op << 32 | the low 32 bits of the argument
// hash), one word so that a reader never pairs one call's op with another's hash; a slot
// header's ref is 1 + the pool offset of the chunk's data when it stays in the writer's pool
// buffer (0: in the slot)
inline constexpr std::size_t seq = 0, tag = 8, bytes = 16, ref = 24, payload = 32;
}  // namespace field

// failed: a call of the rank's failed; it holds the region until it aborts, and its peers no
// longer read its buffers directly (to all else it is still active).
enum class RankState : std::uint64_t { absent = 0, active = 1, left = 2, aborted = 3, failed = 4 };

struct LayoutParams {
  int nranks = 1;
  std::size_t lineBytes = 128;
  std::size_t chunkBytes = 256 << 10;
  int chunks = 8;
};

// The layout parameters a communicator's header (its first line, `field::`) holds. A count too
// large for an int reads as -1, which checkLayoutParams() refuses.
LayoutParams layoutParamsOf(const std::byte* header);

// Layout parameters as read from a communicator's header in a pool (`where` names it): each in
// the range the library writes, and the layout within the region's `regionBytes`. A corrupt or
// foreign header is an error, never an address outside the region.
Status checkLayoutParams(const LayoutParams& params, std::uint64_t regionBytes, const std::string& where);

// Where chunk `seq` (from 1) of `bytes` lies in its data slot on a ring of `slots` slots of
// `slotBytes`: an offset that moves on by the chunk's size (rounded up to 4 KiB) each lap of the
// ring, so that chunks smaller than a slot spread over the whole ring. A writer that rewrites
// lines its readers still cache must first take them back from every reader's cache: on a
// 2-core EPYC, 64 KiB written into the lines a peer had just read took 8 us; into lines it read
// 2 MiB of ring before, 2-3 us.
std::size_t chunkOffsetInSlot(std::size_t slotBytes, int slots, std::uint64_t seq, std::size_t bytes);

class Layout {
 public:
  explicit Layout(const LayoutParams& params);

  const LayoutParams& params() const { return params_; }
  std::size_t lineBytes() const { return params_.lineBytes; }
  std::size_t bytes() const { return bytes_; }
  std::size_t controlBytes() const { return dataOffset_; }
  std::size_t inlineBytes() const { return params_.lineBytes - field::payload; }
  int ringHeaders() const { return params_.chunks > kMinRingHeaders ? params_.chunks : kMinRingHeaders; }

  std::size_t header() const { return 0; }
  std::size_t rankLine(int r) const { return line(1 + r); }
  std::size_t doorbell(int w) const { return line(1 + n() + w); }
  std::size_t ack(int reader, int writer) const { return line(1 + 2 * n() + reader * n() + writer); }
  std::size_t p2pDoorbell(int w, int r) const { return line(1 + 2 * n() + n() * n() + w * n() + r); }
  std::size_t p2pAck(int w, int r) const { return line(1 + 2 * n() + 2 * n() * n() + w * n() + r); }
  std::size_t slotHeader(int w, int header) const { return line(1 + 2 * n() + 3 * n() * n() + w * ringHeaders() + header); }
  std::size_t p2pSlotHeader(int w, int r, int header) const {
    return line(1 + 2 * n() + 3 * n() * n() + n() * ringHeaders() + (w * n() + r) * kP2pHeaders + header);
  }
  std::size_t slot(int w, int slot) const {
    return dataOffset_ + (static_cast<std::size_t>(w) * params_.chunks + slot) * params_.chunkBytes;
  }
  std::size_t p2pChunkBytes() const { return p2pChunkBytes_; }
  std::size_t p2pSlot(int w, int r, int slot) const {
    return p2pOffset_ + ((static_cast<std::size_t>(w) * n() + r) * kP2pChunks + slot) * p2pChunkBytes();
  }

 private:
  int n() const { return params_.nranks; }
  std::size_t line(std::size_t index) const { return index * params_.lineBytes; }

  LayoutParams params_;
  std::size_t dataOffset_ = 0;
  std::size_t p2pOffset_ = 0;
  std::size_t p2pChunkBytes_ = 0;
  std::size_t bytes_ = 0;
};

}  // namespace cxlccl
