#include "mtm/profiler/PerfRecords.h"

#include <algorithm>
#include <cstring>

namespace mtm::profiler {

const char* servedByName(ServedBy s) {
  switch (s) {
    case ServedBy::Cache:
      return "cache";
    case ServedBy::LocalDram:
      return "local_dram";
    case ServedBy::RemoteDram:
      return "remote_dram";
    case ServedBy::Cxl:
      return "cxl";
    case ServedBy::Pmem:
      return "pmem";
    case ServedBy::Other:
      return "other";
    case ServedBy::Unknown:
      break;
  }
  return "unknown";
}

ServedBy decodeDataSource(uint64_t dataSrc) {
  perf_mem_data_src src;
  src.val = dataSrc;
  // The level-number encoding (Linux 4.14+) says it best where the PMU fills it in.
  switch (src.mem_lvl_num) {
    case PERF_MEM_LVLNUM_L1:
    case PERF_MEM_LVLNUM_L2:
    case PERF_MEM_LVLNUM_L3:
    case PERF_MEM_LVLNUM_L4:
    case PERF_MEM_LVLNUM_LFB:
      return ServedBy::Cache;
    case PERF_MEM_LVLNUM_PMEM:
      return ServedBy::Pmem;
    case 0x09:
      return ServedBy::Cxl;  // PERF_MEM_LVLNUM_CXL (Linux 6.3), after Debian 12's headers
    case PERF_MEM_LVLNUM_ANY_CACHE:
      return ServedBy::Cache;
    case PERF_MEM_LVLNUM_RAM:
      return src.mem_remote ? ServedBy::RemoteDram : ServedBy::LocalDram;
    default:
      break;
  }
  const uint64_t lvl = src.mem_lvl;
  if (lvl & PERF_MEM_LVL_NA) return ServedBy::Unknown;
  if (lvl & (PERF_MEM_LVL_L1 | PERF_MEM_LVL_LFB | PERF_MEM_LVL_L2 | PERF_MEM_LVL_L3 | PERF_MEM_LVL_REM_CCE1 | PERF_MEM_LVL_REM_CCE2))
    return ServedBy::Cache;
  if (lvl & PERF_MEM_LVL_LOC_RAM) return ServedBy::LocalDram;
  if (lvl & (PERF_MEM_LVL_REM_RAM1 | PERF_MEM_LVL_REM_RAM2)) return ServedBy::RemoteDram;
  if (lvl & PERF_MEM_LVL_UNC) return ServedBy::Other;
  return ServedBy::Unknown;
}

std::optional<Sample> decodeSample(const uint8_t* body, size_t size, uint64_t type) {
  Sample s;
  size_t off = 0;
  auto take = [&](void* out, size_t n) {
    if (off + n > size) return false;
    if (out) std::memcpy(out, body + off, n);
    off += n;
    return true;
  };
  // Field order of PERF_RECORD_SAMPLE (perf_event_open(2)), for the fields mtm asks for.
  if ((type & PERF_SAMPLE_IDENTIFIER) && !take(nullptr, 8)) return std::nullopt;
  if ((type & PERF_SAMPLE_IP) && !take(&s.ip, 8)) return std::nullopt;
  if (type & PERF_SAMPLE_TID) {
    if (!take(&s.pid, 4) || !take(&s.tid, 4)) return std::nullopt;
  }
  if ((type & PERF_SAMPLE_TIME) && !take(nullptr, 8)) return std::nullopt;
  if ((type & PERF_SAMPLE_ADDR) && !take(&s.addr, 8)) return std::nullopt;
  if ((type & PERF_SAMPLE_ID) && !take(nullptr, 8)) return std::nullopt;
  if ((type & PERF_SAMPLE_STREAM_ID) && !take(nullptr, 8)) return std::nullopt;
  if ((type & PERF_SAMPLE_CPU) && !take(nullptr, 8)) return std::nullopt;
  if ((type & PERF_SAMPLE_PERIOD) && !take(nullptr, 8)) return std::nullopt;
  // READ, CALLCHAIN, RAW, BRANCH_STACK, REGS_USER, STACK_USER are never requested.
  if ((type & PERF_SAMPLE_WEIGHT) && !take(&s.weight, 8)) return std::nullopt;
  if ((type & PERF_SAMPLE_DATA_SRC) && !take(&s.dataSrc, 8)) return std::nullopt;
  if ((type & PERF_SAMPLE_TRANSACTION) && !take(nullptr, 8)) return std::nullopt;
  if ((type & PERF_SAMPLE_REGS_INTR)) return std::nullopt;  // variable layout: never requested
  if ((type & PERF_SAMPLE_PHYS_ADDR) && !take(&s.physAddr, 8)) return std::nullopt;
  return s;
}

RingStats RingReader::drain(const std::function<void(const Sample&)>& onSample, uint64_t maxSamples) {
  RingStats stats;
  // data_head is written by the kernel: read it with acquire order before the data.
  const uint64_t head = __atomic_load_n(&meta_->data_head, __ATOMIC_ACQUIRE);
  uint64_t tail = meta_->data_tail;
  while (tail < head) {
    if (stats.samples >= maxSamples) {
      stats.skippedBytes = head - tail;
      tail = head;
      break;
    }
    const uint64_t avail = head - tail;
    perf_event_header hdr;
    if (avail < sizeof hdr) {
      ++stats.truncated;
      tail = head;
      break;
    }
    const uint64_t at = tail & (size_ - 1);
    auto copyOut = [&](void* dst, uint64_t from, uint64_t n) {
      const uint64_t first = std::min<uint64_t>(n, size_ - from);
      std::memcpy(dst, data_ + from, first);
      if (first < n) std::memcpy(static_cast<uint8_t*>(dst) + first, data_, n - first);
    };
    copyOut(&hdr, at, sizeof hdr);
    if (hdr.size < sizeof hdr || hdr.size > avail || hdr.size > size_) {
      ++stats.truncated;  // a corrupt or partial record: nothing after it can be trusted
      tail = head;
      break;
    }
    scratch_.resize(hdr.size);
    copyOut(scratch_.data(), at, hdr.size);
    const uint8_t* body = scratch_.data() + sizeof hdr;
    const size_t bodySize = hdr.size - sizeof hdr;
    if (hdr.type == PERF_RECORD_SAMPLE) {
      if (auto s = decodeSample(body, bodySize, sampleType_)) {
        ++stats.samples;
        onSample(*s);
      } else {
        ++stats.truncated;
      }
    } else if (hdr.type == PERF_RECORD_LOST && bodySize >= 16) {
      uint64_t lost = 0;
      std::memcpy(&lost, body + 8, 8);  // {u64 id; u64 lost;}
      stats.lost += lost;
    } else {
      ++stats.other;
    }
    tail += hdr.size;
  }
  // Release order: the kernel may reuse the space once it sees the new tail.
  __atomic_store_n(&meta_->data_tail, tail, __ATOMIC_RELEASE);
  return stats;
}

}  // namespace mtm::profiler
