// The accessed-bit BPF program on this machine's kernel: it loads, derives the direct-map base,
// reports exactly the pages touched since the bits were cleared, and its page frames agree with
// /proc/PID/pagemap.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mtm/profiler/AbitScanner.h"

using namespace mtm::profiler;

namespace {

constexpr size_t kPages = 256;

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
      for (size_t i = 0; i < kPages; ++i) p[i * 4096] = 1;
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
  if (geteuid() != 0) {
    WARN("SKIP: loading BPF programs needs root");
    return;
  }
  Toucher child;
  auto scanner = AbitScanner::open(child.pid);
  REQUIRE(scanner.ok());
  CHECK(((*scanner)->levels() == 4 || (*scanner)->levels() == 5));
  CHECK((*scanner)->pageOffsetBase() % (1ull << 30) == 0);

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
  if (geteuid() != 0) {
    WARN("SKIP: loading BPF programs needs root");
    return;
  }
  pid_t dead = fork();
  if (dead == 0) _exit(0);
  waitpid(dead, nullptr, 0);
  auto scanner = AbitScanner::open(dead);
  REQUIRE_FALSE(scanner.ok());
  INFO(scanner.error().message());
  CHECK(scanner.error().message().find("no such process") != std::string::npos);
}
