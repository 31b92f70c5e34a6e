#pragma once
// Owns the accessed-bit BPF program (profiler/bpf/abit.bpf.c) for one process: loads it, binds
// its task iterator to the process, derives the direct-map base and paging depth once, then
// reads the page-table leaf flags of any list of addresses on demand.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "mtm/Result.h"

struct abit;
struct bpf_link;

namespace mtm::profiler {

// Bits of each result byte (profiler/bpf/abit.h).
inline constexpr uint8_t kAbitPresent = 0x1;
inline constexpr uint8_t kAbitAccessed = 0x2;
inline constexpr uint8_t kAbitDirty = 0x4;
inline constexpr uint8_t kAbitHuge = 0x8;
inline constexpr uint8_t kAbitFault = 0x80;

class AbitScanner {
 public:
  // Errors say what is missing: BPF, BTF, the task iterator's tid filter (Linux 6.1+), rights.
  static Result<std::unique_ptr<AbitScanner>> open(int pid);
  ~AbitScanner();
  AbitScanner(const AbitScanner&) = delete;
  AbitScanner& operator=(const AbitScanner&) = delete;

  // One flags byte (kAbit*) and one page frame number per address.
  Status read(const std::vector<uint64_t>& addrs, std::vector<uint8_t>& flags, std::vector<uint64_t>* pfns = nullptr);

  // Bumped on every change of the address space (mmap, munmap, mprotect, brk ...), when tracked.
  uint64_t layoutGeneration() const;
  bool tracksLayout() const { return layoutLink_ != nullptr; }
  bool exited() const;

  uint64_t pageOffsetBase() const;
  unsigned levels() const;

 private:
  AbitScanner() = default;
  Status run();  // one pass of the task iterator
  int pid_ = 0;
  abit* skel_ = nullptr;
  ::bpf_link* iterLink_ = nullptr;
  ::bpf_link* layoutLink_ = nullptr;
  ::bpf_link* exitLink_ = nullptr;
};

}  // namespace mtm::profiler
