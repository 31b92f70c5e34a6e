#pragma once
// The accessed-bit BPF program (profiler/bpf/abit.bpf.c): one loaded copy for every process it
// watches (AbitProgram), and one watcher per process (AbitScanner) that reads the page-table leaf
// flags of any list of addresses on demand. The copy's hooks on mmap_lock releases and process
// exits look a process up in one map, so their cost does not grow with the number watched.

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
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

// The names of the program's hooks (profiler/bpf/abit.bpf.c): one copy of each per AbitProgram.
inline constexpr std::array<std::string_view, 3> kAbitHookPrograms = {"abit_layout_v1", "abit_layout_v2", "abit_exit"};

struct BpfLinkDeleter {
  void operator()(::bpf_link* link) const;
};
using BpfLink = std::unique_ptr<::bpf_link, BpfLinkDeleter>;

class AbitScanner;

class AbitProgram : public std::enable_shared_from_this<AbitProgram> {
 public:
  // Loads the program, attaches its layout and exit hooks and derives the kernel's direct-map
  // base and paging depth (walking mtmd's own tables). Errors say what is missing: BPF, BTF, the
  // task iterator's tid filter (Linux 6.1+), rights.
  static Result<std::shared_ptr<AbitProgram>> open();
  ~AbitProgram();
  AbitProgram(const AbitProgram&) = delete;
  AbitProgram& operator=(const AbitProgram&) = delete;

  // Starts watching `pid`; the watcher stops when destroyed.
  Result<std::unique_ptr<AbitScanner>> watch(int pid);

  bool tracksLayout() const { return layoutLink_ != nullptr; }
  uint64_t pageOffsetBase() const;
  unsigned levels() const;
  size_t watching() const;  // processes in the program's map

 private:
  friend class AbitScanner;
  AbitProgram() = default;
  Result<BpfLink> attachIterator(int pid);
  Status run(::bpf_link* iterator, int pid);  // one pass of a task iterator; mu_ held
  int targetsFd() const;

  abit* skel_ = nullptr;
  BpfLink layoutLink_;
  BpfLink exitLink_;
  std::mutex mu_;  // the iterator links share the program's input and output arrays
};

class AbitScanner {
 public:
  // A watcher with a program of its own, for one-off use (tests, tools).
  static Result<std::unique_ptr<AbitScanner>> open(int pid);
  ~AbitScanner();
  AbitScanner(const AbitScanner&) = delete;
  AbitScanner& operator=(const AbitScanner&) = delete;

  // One flags byte (kAbit*) and one page frame number per address.
  Status read(const std::vector<uint64_t>& addrs, std::vector<uint8_t>& flags, std::vector<uint64_t>* pfns = nullptr);

  // Bumped on every change of the address space (mmap, munmap, mprotect, brk ...), when tracked.
  uint64_t layoutGeneration() const;
  bool tracksLayout() const { return program_->tracksLayout(); }
  bool exited() const;
  const AbitProgram& program() const { return *program_; }

 private:
  friend class AbitProgram;
  AbitScanner(std::shared_ptr<AbitProgram> program, int pid) : program_(std::move(program)), pid_(pid) {}
  std::shared_ptr<AbitProgram> program_;
  int pid_;
  BpfLink iterLink_;
};

}  // namespace mtm::profiler
