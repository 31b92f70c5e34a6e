#pragma once
// perf_event ring-buffer records: decoding is pure (tested on synthetic and recorded bytes);
// RingReader walks the mmapped ring, wrap-around included.

#include <linux/perf_event.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace mtm::profiler {

// Which memory served a sampled load, from PERF_SAMPLE_DATA_SRC.
enum class ServedBy { Unknown, Cache, LocalDram, RemoteDram, Cxl, Pmem, Other };
const char* servedByName(ServedBy s);
ServedBy decodeDataSource(uint64_t dataSrc);

struct Sample {
  uint32_t pid = 0, tid = 0;
  uint64_t ip = 0;
  uint64_t addr = 0;
  uint64_t physAddr = 0;
  uint64_t dataSrc = 0;
  uint64_t weight = 0;  // PERF_SAMPLE_WEIGHT: load latency in cycles
};

struct RingStats {
  uint64_t samples = 0;
  uint64_t lost = 0;          // PERF_RECORD_LOST: records the kernel dropped (ring full)
  uint64_t truncated = 0;     // records that did not fit what the ring holds: reading stopped there
  uint64_t other = 0;         // other record types, skipped
  uint64_t skippedBytes = 0;  // records past the reader's cap, dropped unread
};

// Decodes one PERF_RECORD_SAMPLE body laid out by `sampleType`; nullopt when it is too short.
std::optional<Sample> decodeSample(const uint8_t* body, size_t size, uint64_t sampleType);

// Reads records between the kernel's data_head and our data_tail, then advances data_tail.
// `meta` is the first page of the mapping, `data` the ring of `dataSize` bytes (a power of 2).
class RingReader {
 public:
  RingReader(perf_event_mmap_page* meta, uint8_t* data, uint64_t dataSize, uint64_t sampleType)
      : meta_(meta), data_(data), size_(dataSize), sampleType_(sampleType) {}
  // Calls `onSample` for each sample; returns what it saw.
  // At most `maxSamples` samples are decoded; the records after them are dropped unread, so
  // that a burst (a process faulting in its heap) costs the reader no more than the cap.
  RingStats drain(const std::function<void(const Sample&)>& onSample, uint64_t maxSamples = UINT64_MAX);

 private:
  perf_event_mmap_page* meta_;
  uint8_t* data_;
  uint64_t size_;
  uint64_t sampleType_;
  std::vector<uint8_t> scratch_;  // a record that wraps around the end, made contiguous
};

}  // namespace mtm::profiler
