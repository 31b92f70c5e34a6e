#pragma once
// Anonymous memory of the library's own for large buffers it frees again soon (the direct reads'
// probes and timed calls at communicator creation). Through malloc, freeing a block of over 128
// KiB raises glibc's mmap threshold to that block's size, up to 32 MiB, for the whole process:
// the application's later buffers of up to that size would then come from the heap, at other
// page offsets than before (2 ranks' AllGathers and AllToAlls of 256 KiB-2 MiB, read directly,
// took 1.02-1.10x as long in buffers that came from the heap so: docs/benchmarks.md, "session
// 45"). A mapping leaves malloc's state as it was.

#include <cstddef>

namespace cxlccl {

class PageBuffer {
 public:
  explicit PageBuffer(std::size_t bytes);  // zeroed; data() is null where the mapping failed
  ~PageBuffer();
  PageBuffer(const PageBuffer&) = delete;
  PageBuffer& operator=(const PageBuffer&) = delete;

  std::byte* data() const { return data_; }
  std::size_t size() const { return bytes_; }

 private:
  std::byte* data_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace cxlccl
