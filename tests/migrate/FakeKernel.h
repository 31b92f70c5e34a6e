#pragma once
// A recording stand-in for the kernel's page-placement calls, with move_pages(2)'s real rules:
// a whole-call errno leaves later status entries untouched; a THP moves whole from its first
// address; a full node fails with ENOMEM; busy pages fail with EBUSY for a few tries.

#include <cerrno>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "mtm/migrate/Clock.h"
#include "mtm/migrate/HugePages.h"
#include "mtm/migrate/Syscalls.h"

namespace mtm::test {

class FakeClock final : public migrate::Clock {
 public:
  TimePoint now() override {
    std::lock_guard lock(mu_);
    return now_;
  }
  void sleepFor(Duration d) override {
    if (d > Duration::zero()) advance(d);
  }
  void advance(Duration d) {
    std::lock_guard lock(mu_);
    now_ += d;
  }

 private:
  std::mutex mu_;
  TimePoint now_{std::chrono::seconds(1000)};
};

class FakeKernel final : public migrate::MemorySyscalls, public migrate::HugePageFinder {
 public:
  struct Call {
    unsigned long count;
    bool query;
    int node;  // destination of the first entry, -1 for queries
  };

  // Pages of one process: 4 KiB address -> node. A THP is its first address with thp set.
  void map(uint64_t start, uint64_t bytes, int node) {
    for (uint64_t a = start; a < start + bytes; a += 4096) pages_[a] = node;
  }
  void mapThp(uint64_t start, int node) {
    map(start, 2 << 20, node);
    thps_.insert(start);
  }
  std::map<int, uint64_t> capacity;   // node -> free 4 KiB pages (absent: unlimited)
  std::map<uint64_t, int> busyTries;  // address -> tries that fail with EBUSY
  std::set<uint64_t> shared;          // addresses that fail with EACCES
  std::set<uint64_t> absent;          // addresses with no page yet: ENOENT
  int wholeCallErrno = 0;             // every call fails with it
  int exitAfterCalls = -1;            // the process exits after this many calls
  long pagesPerCallCost = 0;          // fake nanoseconds per page a call takes
  FakeClock* clock = nullptr;
  std::vector<Call> calls;
  std::vector<std::pair<uint64_t, int>> madvised;  // (address, advice)

  int nodeOf(uint64_t addr) const { return pages_.at(addr); }
  bool isThp(uint64_t addr) const { return thps_.count(addr) > 0; }

  long movePages(int, unsigned long count, void** addrs, const int* nodes, int* status, int) override {
    std::lock_guard lock(mu_);
    calls.push_back({count, nodes == nullptr, nodes ? nodes[0] : -1});
    if (clock) clock->advance(std::chrono::nanoseconds(pagesPerCallCost * static_cast<long>(count)));
    if (exited_) return -ESRCH;
    if (exitAfterCalls >= 0 && static_cast<int>(calls.size()) > exitAfterCalls) {
      exited_ = true;
      return -ESRCH;
    }
    if (wholeCallErrno != 0) return -wholeCallErrno;
    for (unsigned long i = 0; i < count; ++i) {
      const uint64_t a = reinterpret_cast<uint64_t>(addrs[i]);
      auto it = pages_.find(a);
      if (it == pages_.end()) {
        status[i] = -EFAULT;
        continue;
      }
      if (absent.count(a)) {
        status[i] = -ENOENT;
        continue;
      }
      if (nodes == nullptr) {
        status[i] = it->second;
        continue;
      }
      const int to = nodes[i];
      if (it->second == to) {
        status[i] = to;
        continue;
      }
      if (thpTail(a)) {
        status[i] = -EBUSY;
        continue;
      }
      if (shared.count(a)) {
        status[i] = -EACCES;
        continue;
      }
      if (auto b = busyTries.find(a); b != busyTries.end() && b->second > 0) {
        --b->second;
        status[i] = -EBUSY;
        continue;
      }
      const uint64_t n = thps_.count(a) ? 512 : 1;
      if (auto c = capacity.find(to); c != capacity.end()) {
        if (c->second < n) return -ENOMEM;  // entries from i on keep their old values
        c->second -= n;
      }
      for (uint64_t p = 0; p < n; ++p) pages_[a + p * 4096] = to;
      status[i] = to;
    }
    return 0;
  }

  int pidfdOpen(int pid) override {
    if (pid == kDeadPid) return -ESRCH;
    ++pidfdsOpened;
    ++pidfdsOpen;
    return 42;
  }
  bool exited(int) override { return exited_; }
  void closeFd(int) override { --pidfdsOpen; }
  int pidfdsOpened = 0;  // ever
  int pidfdsOpen = 0;    // now
  long processMadvise(int, const std::vector<iovec>& ranges, int advice) override {
    for (const auto& r : ranges) {
      const uint64_t a = reinterpret_cast<uint64_t>(r.iov_base);
      madvised.push_back({a, advice});
      // MADV_COLD on part of an exclusively mapped THP splits it.
      const uint64_t head = a & ~((2ull << 20) - 1);
      if (advice == 20 && r.iov_len < (2u << 20) && !splitRefused.count(head)) thps_.erase(head);
    }
    return 0;
  }
  std::set<uint64_t> splitRefused;

  Result<std::vector<migrate::HugeExtent>> find(int, const std::vector<Vma>&, uint64_t start, uint64_t end) override {
    std::vector<migrate::HugeExtent> out;
    for (uint64_t t : thps_)
      if (t + (2 << 20) > start && t < end) out.push_back({t, 2ull << 20, false});
    return out;
  }
  std::string method() const override { return "fake"; }

  static constexpr int kDeadPid = 999999;

 private:
  bool thpTail(uint64_t a) const {
    const uint64_t head = a & ~((2ull << 20) - 1);
    return head != a && thps_.count(head);
  }
  std::map<uint64_t, int> pages_;
  std::set<uint64_t> thps_;
  bool exited_ = false;
  std::mutex mu_;
};

}  // namespace mtm::test
