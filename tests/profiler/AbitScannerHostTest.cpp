// The accessed-bit BPF program on this machine's kernel: it loads, derives the direct-map base,
// reports exactly the pages touched since the bits were cleared, and its page frames agree with
// /proc/PID/pagemap.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <set>

#include "Skip.h"
#include "mtm/profiler/AbitScanner.h"
#include "mtm/profiler/AccessedBitClear.h"
#include "mtm/profiler/LoadedBpfPrograms.h"

using namespace mtm::profiler;

namespace {

constexpr size_t kPages = 256;

// Touches the pages at `offsets` of `p` so that they are on the LRU with their accessed bits set.
// Kernel quirk: MADV_COLD skips a page not yet on the LRU (still in the per-CPU batch of the CPU
// that faulted it in, which only that CPU's madvise drains), so the child stays on one CPU,
// drains its batch with a MADV_COLD of its own, and touches again.
void touchOnLru(volatile char* p, size_t bytes, const std::vector<uint64_t>& offsets) {
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(sched_getcpu(), &one);
  sched_setaffinity(0, sizeof one, &one);
  for (uint64_t off : offsets) p[off] = 1;
  madvise(const_cast<char*>(p), bytes, MADV_COLD);
  for (uint64_t off : offsets) p[off] = 1;
}

// A child with kPages touched pages; on each byte received it touches the even pages again.
struct Toucher {
  pid_t pid = -1;
  int cmd[2], ack[2];
  uint64_t base = 0;
  Toucher() {
    REQUIRE(pipe(cmd) == 0);
    REQUIRE(pipe(ack) == 0);
    pid = fork();
    if (pid == 0) {
      auto* p = static_cast<volatile char*>(mmap(nullptr, kPages * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
      madvise(const_cast<char*>(p), kPages * 4096, MADV_NOHUGEPAGE);
      std::vector<uint64_t> offsets;
      for (size_t i = 0; i < kPages; ++i) offsets.push_back(i * 4096);
      touchOnLru(p, kPages * 4096, offsets);
      uint64_t addr = reinterpret_cast<uint64_t>(p);
      if (write(ack[1], &addr, sizeof addr) != sizeof addr) _exit(1);
      char c;
      while (read(cmd[0], &c, 1) == 1) {
        for (size_t i = 0; i < kPages; i += 2) p[i * 4096] = 2;
        if (write(ack[1], &c, 1) != 1) _exit(1);
      }
      _exit(0);
    }
    REQUIRE(read(ack[0], &base, sizeof base) == sizeof base);
  }
  void touchEven() {
    char c = 't';
    REQUIRE(write(cmd[1], &c, 1) == 1);
    REQUIRE(read(ack[0], &c, 1) == 1);
  }
  ~Toucher() {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  }
};

std::vector<uint64_t> pageAddresses(uint64_t base) {
  std::vector<uint64_t> addrs;
  for (size_t i = 0; i < kPages; ++i) addrs.push_back(base + i * 4096);
  return addrs;
}

}  // namespace

TEST_CASE("the accessed-bit program reports exactly the pages touched since the bits were cleared", "[bpf][host]") {
  MTM_REQUIRE_ROOT("loading BPF programs");
  Toucher child;
  auto scanner = AbitScanner::open(child.pid);
  REQUIRE(scanner.ok());
  CHECK(((*scanner)->program().levels() == 4 || (*scanner)->program().levels() == 5));
  CHECK((*scanner)->program().pageOffsetBase() % (1ull << 30) == 0);

  const auto addrs = pageAddresses(child.base);
  std::vector<uint8_t> flags;
  std::vector<uint64_t> pfns;
  REQUIRE((*scanner)->read(addrs, flags, &pfns).ok());
  for (size_t i = 0; i < kPages; ++i) CHECK((flags[i] & kAbitPresent));

  // Page frames agree with pagemap (root sees them).
  int pm = open(("/proc/" + std::to_string(child.pid) + "/pagemap").c_str(), O_RDONLY);
  REQUIRE(pm >= 0);
  for (size_t i = 0; i < kPages; ++i) {
    uint64_t entry = 0;
    REQUIRE(pread(pm, &entry, 8, static_cast<off_t>(addrs[i] / 4096 * 8)) == 8);
    CHECK(pfns[i] == (entry & ((1ull << 55) - 1)));
  }
  close(pm);

  // Clear every A bit (process_madvise MADV_COLD, one iovec per page), touch the even pages.
  int pidfd = static_cast<int>(syscall(SYS_pidfd_open, child.pid, 0));
  REQUIRE(pidfd >= 0);
  std::vector<iovec> iov;
  for (auto a : addrs) iov.push_back({reinterpret_cast<void*>(a), 4096});
  REQUIRE(syscall(SYS_process_madvise, pidfd, iov.data(), iov.size(), MADV_COLD, 0) == static_cast<long>(kPages * 4096));
  close(pidfd);
  REQUIRE((*scanner)->read(addrs, flags).ok());
  size_t stillAccessed = 0;
  for (auto f : flags) stillAccessed += (f & kAbitAccessed) != 0;
  CHECK(stillAccessed == 0);

  child.touchEven();
  REQUIRE((*scanner)->read(addrs, flags).ok());
  for (size_t i = 0; i < kPages; ++i) {
    INFO("page " << i);
    CHECK(((flags[i] & kAbitAccessed) != 0) == (i % 2 == 0));
  }
}

TEST_CASE("the accessed-bit program refuses a pid that does not exist", "[bpf][host]") {
  MTM_REQUIRE_ROOT("loading BPF programs");
  pid_t dead = fork();
  if (dead == 0) _exit(0);
  waitpid(dead, nullptr, 0);
  auto scanner = AbitScanner::open(dead);
  REQUIRE_FALSE(scanner.ok());
  INFO(scanner.error().message());
  CHECK(scanner.error().message().find("no such process") != std::string::npos);
}

namespace {

// A child with a sparse anonymous mapping of `bytes` (4 KiB pages) whose pages at `offsets` it
// touched; a hole where `holeAt` says (munmapped), when not 0.
struct SparseToucher {
  pid_t pid = -1;
  uint64_t base = 0;
  SparseToucher(uint64_t bytes, const std::vector<uint64_t>& offsets, uint64_t holeAt = 0) {
    int ack[2];
    REQUIRE(pipe(ack) == 0);
    pid = fork();
    if (pid == 0) {
      auto* p =
          static_cast<volatile char*>(mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0));
      madvise(const_cast<char*>(p), bytes, MADV_NOHUGEPAGE);
      touchOnLru(p, bytes, offsets);
      if (holeAt) munmap(const_cast<char*>(p) + holeAt, 4096);
      uint64_t addr = reinterpret_cast<uint64_t>(p);
      if (write(ack[1], &addr, sizeof addr) != sizeof addr) _exit(1);
      pause();
      _exit(0);
    }
    REQUIRE(read(ack[0], &base, sizeof base) == sizeof base);
    close(ack[0]);
    close(ack[1]);
  }
  ~SparseToucher() {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  }
};

// The addresses whose page is present with its accessed bit set.
std::vector<uint64_t> accessedOf(AbitScanner& scanner, const std::vector<uint64_t>& addrs) {
  std::vector<uint8_t> flags;
  REQUIRE(scanner.read(addrs, flags).ok());
  std::vector<uint64_t> out;
  for (size_t i = 0; i < addrs.size(); ++i)
    if ((flags[i] & kAbitPresent) && (flags[i] & kAbitAccessed)) out.push_back(addrs[i]);
  return out;
}

size_t accessedCount(AbitScanner& scanner, const std::vector<uint64_t>& addrs) { return accessedOf(scanner, addrs).size(); }

}  // namespace

TEST_CASE("accessed bits are cleared past the 2 GiB one process_madvise call advises", "[bpf][host]") {
  MTM_REQUIRE_ROOT("loading BPF programs");
  constexpr uint64_t kG = 1ull << 30;
  const std::vector<uint64_t> offsets{0, kG, 2 * kG - 4096, 2 * kG, 2 * kG + 4096, 3 * kG - 4096};
  SparseToucher child(3 * kG, offsets);
  auto scanner = AbitScanner::open(child.pid);
  REQUIRE(scanner.ok());
  std::vector<uint64_t> addrs;
  for (uint64_t off : offsets) addrs.push_back(child.base + off);
  REQUIRE(accessedCount(**scanner, addrs) == offsets.size());

  int pidfd = static_cast<int>(syscall(SYS_pidfd_open, child.pid, 0));
  REQUIRE(pidfd >= 0);
  // One range of 3 GiB: a single process_madvise call would stop at 2 GiB - 4 KiB.
  auto stats = clearAccessedBits(pidfd, {{reinterpret_cast<void*>(child.base), 3 * kG}});
  close(pidfd);
  REQUIRE(stats.ok());
  CHECK(stats->skipped == 0);
  CHECK(stats->calls >= 3);
  CHECK(accessedCount(**scanner, addrs) == 0);
}

TEST_CASE("a range the kernel refuses is skipped and the ranges after it are still cleared", "[bpf][host]") {
  MTM_REQUIRE_ROOT("loading BPF programs");
  const std::vector<uint64_t> offsets{0, 2 * 4096};
  SparseToucher child(3 * 4096, offsets, 4096);  // page 1 is a hole
  auto scanner = AbitScanner::open(child.pid);
  REQUIRE(scanner.ok());
  const std::vector<uint64_t> addrs{child.base, child.base + 2 * 4096};
  REQUIRE(accessedCount(**scanner, addrs) == 2);
  int pidfd = static_cast<int>(syscall(SYS_pidfd_open, child.pid, 0));
  REQUIRE(pidfd >= 0);
  std::vector<iovec> iov;
  for (uint64_t i = 0; i < 3; ++i) iov.push_back({reinterpret_cast<void*>(child.base + i * 4096), 4096});
  auto stats = clearAccessedBits(pidfd, iov);
  close(pidfd);
  REQUIRE(stats.ok());
  CHECK(stats->skipped == 1);
  REQUIRE(stats->notCleared.size() == 1);
  CHECK(reinterpret_cast<uint64_t>(stats->notCleared[0].iov_base) == child.base + 4096);
  CHECK(accessedCount(**scanner, addrs) == 0);
}

TEST_CASE("a clear past its CPU deadline starts no further call and names what it left", "[bpf][host]") {
  MTM_REQUIRE_ROOT("loading BPF programs");
  constexpr uint64_t kPerCall = 16, kPages = 3 * kPerCall;
  std::vector<uint64_t> offsets;
  for (uint64_t i = 0; i < kPages; ++i) offsets.push_back(2 * i * 4096);  // every other page: one iovec each
  SparseToucher child(2 * kPages * 4096, offsets);
  auto scanner = AbitScanner::open(child.pid);
  REQUIRE(scanner.ok());
  std::vector<uint64_t> addrs;
  std::vector<iovec> iov;
  for (uint64_t off : offsets) {
    addrs.push_back(child.base + off);
    iov.push_back({reinterpret_cast<void*>(child.base + off), 4096});
  }
  const std::vector<uint64_t> first(addrs.begin(), addrs.begin() + kPerCall), rest(addrs.begin() + kPerCall, addrs.end());
  // Set, all but a page or two: a machine's own DAMON monitor (physical addresses) clears a
  // sampled page's bit now and then -- in about one run in seven one of these 48 read clear.
  REQUIRE(accessedCount(**scanner, first) + 2 >= first.size());
  const std::vector<uint64_t> restSet = accessedOf(**scanner, rest);
  REQUIRE(restSet.size() + 2 >= rest.size());
  int pidfd = static_cast<int>(syscall(SYS_pidfd_open, child.pid, 0));
  REQUIRE(pidfd >= 0);
  auto stats = clearAccessedBits(pidfd, iov, 1, kPerCall);  // 1 ns: spent by the first call
  close(pidfd);
  REQUIRE(stats.ok());
  CHECK(stats->calls == 1);
  CHECK(stats->stoppedAtDeadline);
  REQUIRE(stats->notCleared.size() == kPages - kPerCall);
  CHECK(reinterpret_cast<uint64_t>(stats->notCleared[0].iov_base) == addrs[kPerCall]);
  CHECK(accessedCount(**scanner, first) == 0);
  CHECK(accessedCount(**scanner, restSet) == restSet.size());  // none of those the deadline left was cleared
}

namespace {

// A child that maps and unmaps a page each time it is told to.
struct Mapper {
  pid_t pid = -1;
  int cmd[2], ack[2];
  Mapper() {
    REQUIRE(pipe(cmd) == 0);
    REQUIRE(pipe(ack) == 0);
    pid = fork();
    if (pid == 0) {
      char c;
      while (read(cmd[0], &c, 1) == 1) {
        void* p = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        munmap(p, 4096);
        if (write(ack[1], &c, 1) != 1) _exit(1);
      }
      _exit(0);
    }
  }
  void remap() {
    char c = 'm';
    REQUIRE(write(cmd[1], &c, 1) == 1);
    REQUIRE(read(ack[0], &c, 1) == 1);
  }
  ~Mapper() {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    for (int fd : {cmd[0], cmd[1], ack[0], ack[1]}) close(fd);
  }
};

// Ids of the BPF programs loaded on the machine under `name`.
std::set<uint32_t> loadedPrograms(const std::string& name) {
  std::set<uint32_t> ids;
  for (const auto& p : loadedBpfPrograms())
    if (p.name == name) ids.insert(p.id);
  return ids;
}

}  // namespace

TEST_CASE("one accessed-bit program watches many processes -- each one's layout changes and exit are its own", "[bpf][host]") {
  MTM_REQUIRE_ROOT("loading BPF programs");
  const std::set<uint32_t> before = loadedPrograms("abit_exit");
  auto program = AbitProgram::open();
  REQUIRE(program.ok());
  std::vector<std::unique_ptr<Mapper>> children;
  std::vector<std::unique_ptr<AbitScanner>> scanners;
  for (int i = 0; i < 3; ++i) {
    children.push_back(std::make_unique<Mapper>());
    auto s = (*program)->watch(children.back()->pid);
    REQUIRE(s.ok());
    scanners.push_back(std::move(*s));
  }
  // One copy of the hooks, however many processes are watched: counted among the programs this
  // process holds (/proc/self/fdinfo's prog_id), since tests run in parallel load their own.
  // (Programs closed earlier may linger a while: the kernel frees them later.)
  std::set<uint32_t> held;
  for (const auto& fd : std::filesystem::directory_iterator("/proc/self/fdinfo")) {
    std::ifstream info(fd.path());
    for (std::string line; std::getline(info, line);)
      if (line.rfind("prog_id:", 0) == 0) held.insert(static_cast<uint32_t>(std::stoul(line.substr(8))));
  }
  size_t loaded = 0;
  for (uint32_t id : loadedPrograms("abit_exit")) loaded += !before.contains(id) && held.contains(id);
  CHECK(loaded == 1);
  CHECK((*program)->watching() == 3);
  REQUIRE(scanners[0]->tracksLayout());

  const uint64_t gen0 = scanners[0]->layoutGeneration(), gen1 = scanners[1]->layoutGeneration();
  children[0]->remap();
  CHECK(scanners[0]->layoutGeneration() > gen0);  // the mmap (munmap may release its lock as a reader)
  CHECK(scanners[1]->layoutGeneration() == gen1);

  kill(children[2]->pid, SIGKILL);
  waitpid(children[2]->pid, nullptr, 0);
  CHECK(scanners[2]->exited());
  CHECK_FALSE(scanners[0]->exited());
  std::vector<uint8_t> flags;
  CHECK_FALSE(scanners[2]->read({0x1000}, flags).ok());

  scanners.pop_back();
  CHECK((*program)->watching() == 2);
  scanners.clear();
  CHECK((*program)->watching() == 0);
}
