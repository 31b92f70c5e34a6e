#pragma once
// Threads that share a rank's large copies: one thread's memcpy reaches a fraction of what a CXL
// link (or several striped devices) can carry. A copy is cut into up to `threads` parts of at
// least kMinPart bytes; the calling thread copies the first part itself and waits for the rest.
// Helpers spin a little after each part (the pipeline's next chunk follows within microseconds),
// then sleep until woken.

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace cxlccl {

class CopyCrew {
 public:
  static constexpr std::size_t kMinPart = 64 << 10;

  explicit CopyCrew(int threads);  // threads - 1 helpers; 1: the caller copies alone
  ~CopyCrew();
  CopyCrew(const CopyCrew&) = delete;
  CopyCrew& operator=(const CopyCrew&) = delete;

  int threads() const { return static_cast<int>(helpers_.size()) + 1; }
  // copyToPool(dst, src, n, streaming) (Copy.h), shared out when n is large enough.
  void copy(void* dst, const void* src, std::size_t n, bool streaming);

 private:
  struct Job {
    std::byte* dst = nullptr;
    const std::byte* src = nullptr;
    std::size_t n = 0;
    std::size_t part = 0;
    int parts = 0;
    bool streaming = false;
  };
  void helperLoop(int index);
  void copyPart(const Job& job, int index) const;

  std::vector<std::thread> helpers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  Job job_;
  std::atomic<std::uint64_t> generation_{0};
  std::atomic<int> pending_{0};
  std::atomic<int> sleeping_{0};
  bool stop_ = false;  // under mutex_
};

}  // namespace cxlccl
