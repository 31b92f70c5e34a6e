#pragma once
// One rank's view of its communicator's region in the pool, and the only way the library reads
// or writes it: every write is followed by publish() of its bytes, every read of another rank's
// bytes preceded by refresh(). How those work is the coherence mode:
//   hardware  one host: release/acquire fences only;
//   flush     hosts without coherence: lines written back (clwb) / invalidated (clflushopt);
//   simulate  tests: the rank works on a private copy of the region that only publish() (copy
//             out) and refresh() (copy in) synchronise, so a missing call gives wrong data even
//             on a coherent machine. Copies are whole 64-byte lines, like the hardware's, so a
//             rank that writes a line it does not own clobbers its owner's data, as it would.

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "cxlccl.h"

namespace cxlccl {

enum class Coherence { hardware, flush, simulate };
const char* coherenceName(Coherence mode);

class RegionView {
 public:
  RegionView(std::byte* shared, std::size_t bytes, Coherence mode);
  ~RegionView();
  RegionView(const RegionView&) = delete;
  RegionView& operator=(const RegionView&) = delete;

  Coherence mode() const { return mode_; }
  std::size_t bytes() const { return bytes_; }
  std::byte* at(std::size_t offset) const { return view_ + offset; }

  // Makes this rank's writes to [offset, offset + n) visible to the others.
  void publish(std::size_t offset, std::size_t n) const;
  // Makes the others' published writes to [offset, offset + n) visible to this rank.
  void refresh(std::size_t offset, std::size_t n) const;

  // A 64-bit word of a flag line: load refreshes its line first; store publishes it.
  std::uint64_t load(std::size_t offset) const;
  void store(std::size_t offset, std::uint64_t value) const;
  // Reads / writes a word of this rank's view only (no refresh, no publish).
  std::uint64_t peek(std::size_t offset) const;
  void poke(std::size_t offset, std::uint64_t value) const;

 private:
  std::byte* shared_;
  std::byte* view_;
  std::size_t bytes_;
  Coherence mode_;
};

}  // namespace cxlccl
