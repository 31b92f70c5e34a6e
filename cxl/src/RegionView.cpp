#include "RegionView.h"

#include <sys/mman.h>

#include <cstring>
#include <stdexcept>

#include "CacheLines.h"

namespace cxlccl {
namespace {

// Whole lines, one 64-bit word at a time, so a concurrent reader of a flag word never sees it
// torn (the hardware writes back a line at once; the simulation's copy must not be weaker).
void copyLines(std::byte* to, const std::byte* from, std::size_t offset, std::size_t n) {
  std::size_t first = offset & ~(kCacheLine - 1);
  std::size_t end = (offset + n + kCacheLine - 1) & ~(kCacheLine - 1);
  auto* dst = reinterpret_cast<std::uint64_t*>(to + first);
  auto* src = reinterpret_cast<const std::uint64_t*>(from + first);
  for (std::size_t i = 0; i < (end - first) / 8; ++i) {
    std::atomic_ref<std::uint64_t>(dst[i]).store(std::atomic_ref<const std::uint64_t>(src[i]).load(std::memory_order_relaxed),
                                                 std::memory_order_relaxed);
  }
}

}  // namespace

const char* coherenceName(Coherence mode) {
  switch (mode) {
    case Coherence::hardware:
      return "hardware";
    case Coherence::flush:
      return "flush";
    case Coherence::simulate:
      return "simulate";
  }
  return "?";
}

RegionView::RegionView(std::byte* shared, std::size_t bytes, Coherence mode) : shared_(shared), view_(shared), bytes_(bytes), mode_(mode) {
  if (mode_ != Coherence::simulate) return;
  void* copy = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (copy == MAP_FAILED) throw std::bad_alloc();
  view_ = static_cast<std::byte*>(copy);
  std::memcpy(view_, shared_, bytes_);
}

RegionView::~RegionView() {
  if (view_ != shared_) munmap(view_, bytes_);
}

void RegionView::publish(std::size_t offset, std::size_t n) const {
  switch (mode_) {
    case Coherence::hardware:
      std::atomic_thread_fence(std::memory_order_release);
      break;
    case Coherence::flush:
      writeBackLines(view_ + offset, n);
      break;
    case Coherence::simulate:
      std::atomic_thread_fence(std::memory_order_release);
      copyLines(shared_, view_, offset, n);
      std::atomic_thread_fence(std::memory_order_release);
      break;
  }
}

void RegionView::refresh(std::size_t offset, std::size_t n) const {
  switch (mode_) {
    case Coherence::hardware:
      std::atomic_thread_fence(std::memory_order_acquire);
      break;
    case Coherence::flush:
      invalidateLines(view_ + offset, n);
      break;
    case Coherence::simulate:
      std::atomic_thread_fence(std::memory_order_acquire);
      copyLines(view_, shared_, offset, n);
      std::atomic_thread_fence(std::memory_order_acquire);
      break;
  }
}

std::uint64_t RegionView::peek(std::size_t offset) const {
  return std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(view_ + offset)).load(std::memory_order_acquire);
}

void RegionView::poke(std::size_t offset, std::uint64_t value) const {
  std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(view_ + offset)).store(value, std::memory_order_release);
}

std::uint64_t RegionView::load(std::size_t offset) const {
  refresh(offset, sizeof(std::uint64_t));
  return peek(offset);
}

void RegionView::store(std::size_t offset, std::uint64_t value) const {
  poke(offset, value);
  publish(offset, sizeof(std::uint64_t));
}

}  // namespace cxlccl
