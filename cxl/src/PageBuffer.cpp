#include "PageBuffer.h"

#include <sys/mman.h>

namespace cxlccl {

PageBuffer::PageBuffer(std::size_t bytes) {
  if (bytes == 0) return;
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return;
  data_ = static_cast<std::byte*>(p);
  bytes_ = bytes;
}

PageBuffer::~PageBuffer() {
  if (data_ != nullptr) munmap(data_, bytes_);
}

}  // namespace cxlccl
