#include "CopyCrew.h"

#include <immintrin.h>

#include <algorithm>
#include <chrono>

#include "Copy.h"

namespace cxlccl {
namespace {

// How long a helper spins for the next job before it sleeps.
constexpr auto kSpinFor = std::chrono::microseconds(50);

}  // namespace

CopyCrew::CopyCrew(int threads) {
  for (int i = 1; i < threads; ++i) helpers_.emplace_back([this, i] { helperLoop(i); });
}

CopyCrew::~CopyCrew() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
    generation_.fetch_add(1, std::memory_order_release);
  }
  wake_.notify_all();
  for (std::thread& t : helpers_) t.join();
}

void CopyCrew::copyPart(const Job& job, int index) const {
  std::size_t begin = static_cast<std::size_t>(index) * job.part;
  std::size_t end = std::min(job.n, begin + job.part);
  if (begin < end) copyToPool(job.dst + begin, job.src + begin, end - begin, job.streaming);
}

void CopyCrew::copy(void* dst, const void* src, std::size_t n, bool streaming) {
  int parts = static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(threads()), n / kMinPart));
  if (parts <= 1) {
    copyToPool(dst, src, n, streaming);
    return;
  }
  // Parts are whole 64-byte lines, so no two threads write one line.
  std::size_t part = ((n + static_cast<std::size_t>(parts) - 1) / static_cast<std::size_t>(parts) + 63) / 64 * 64;
  Job job{static_cast<std::byte*>(dst), static_cast<const std::byte*>(src), n, part, parts, streaming};
  {
    // Helpers take the job and its generation together under the lock: one that did not take
    // part in the last job may still be reading it when this one is posted.
    std::lock_guard<std::mutex> lock(mutex_);
    job_ = job;
    pending_.store(parts - 1, std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_release);
  }
  if (sleeping_.load(std::memory_order_acquire) > 0) wake_.notify_all();
  copyPart(job, 0);
  for (int spins = 0; pending_.load(std::memory_order_acquire) > 0; ++spins) {
    if (spins < 4096)
      _mm_pause();
    else
      std::this_thread::yield();  // a helper may have lost its CPU
  }
}

void CopyCrew::helperLoop(int index) {
  std::uint64_t seen = 0;
  for (;;) {
    auto spinUntil = std::chrono::steady_clock::now() + kSpinFor;
    while (generation_.load(std::memory_order_acquire) == seen && std::chrono::steady_clock::now() < spinUntil) _mm_pause();
    if (generation_.load(std::memory_order_acquire) == seen) {
      std::unique_lock<std::mutex> lock(mutex_);
      sleeping_.fetch_add(1, std::memory_order_acq_rel);
      wake_.wait(lock, [&] { return generation_.load(std::memory_order_acquire) != seen; });
      sleeping_.fetch_sub(1, std::memory_order_acq_rel);
    }
    Job job;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (stop_) return;
      job = job_;
      seen = generation_.load(std::memory_order_relaxed);
    }
    if (index < job.parts) {
      copyPart(job, index);
      pending_.fetch_sub(1, std::memory_order_acq_rel);
    }
  }
}

}  // namespace cxlccl
