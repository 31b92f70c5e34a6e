#include <catch2/catch.hpp>

#include <cstring>
#include <vector>

#include "mtm/profiler/PerfRecords.h"

using namespace mtm::profiler;

namespace {

constexpr uint64_t kType = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_ADDR | PERF_SAMPLE_WEIGHT | PERF_SAMPLE_DATA_SRC;

// A ring of `size` bytes behind a perf_event_mmap_page, written the way the kernel does.
struct FakeRing {
  perf_event_mmap_page meta{};
  std::vector<uint8_t> data;
  explicit FakeRing(size_t size) : data(size) {}

  void put(const void* bytes, size_t n) {
    for (size_t i = 0; i < n; ++i) data[(meta.data_head + i) & (data.size() - 1)] = static_cast<const uint8_t*>(bytes)[i];
    meta.data_head += n;
  }
  void sample(uint64_t ip, uint32_t pid, uint32_t tid, uint64_t addr, uint64_t weight, uint64_t src) {
    perf_event_header h{PERF_RECORD_SAMPLE, 0, sizeof(perf_event_header) + 8 + 8 + 8 + 8 + 8};
    put(&h, sizeof h);
    put(&ip, 8);
    put(&pid, 4);
    put(&tid, 4);
    put(&addr, 8);
    put(&weight, 8);
    put(&src, 8);
  }
  void lost(uint64_t n) {
    perf_event_header h{PERF_RECORD_LOST, 0, sizeof(perf_event_header) + 16};
    uint64_t id = 7;
    put(&h, sizeof h);
    put(&id, 8);
    put(&n, 8);
  }
  RingReader reader() { return RingReader(&meta, data.data(), data.size(), kType); }
};

}  // namespace

TEST_CASE("samples decode in the kernel's field order", "[perf]") {
  FakeRing ring(4096);
  ring.sample(0x401000, 42, 43, 0x7f0000001000, 250, 0);
  std::vector<Sample> seen;
  auto stats = ring.reader().drain([&](const Sample& s) { seen.push_back(s); });
  CHECK(stats.samples == 1);
  REQUIRE(seen.size() == 1);
  CHECK(seen[0].ip == 0x401000);
  CHECK(seen[0].pid == 42);
  CHECK(seen[0].tid == 43);
  CHECK(seen[0].addr == 0x7f0000001000);
  CHECK(seen[0].weight == 250);
  CHECK(ring.meta.data_tail == ring.meta.data_head);
  CHECK_FALSE(decodeSample(ring.data.data(), 12, kType).has_value());  // too short: no sample
}

TEST_CASE("records that wrap around the end of the ring are read whole", "[perf]") {
  FakeRing ring(256);  // 48-byte records: the 6th wraps
  std::vector<uint64_t> addrs;
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 4; ++i) ring.sample(1, 1, 1, 0x1000 * (round * 4 + i + 1), 0, 0);
    ring.reader().drain([&](const Sample& s) { addrs.push_back(s.addr); });
  }
  REQUIRE(addrs.size() == 12);
  for (int i = 0; i < 12; ++i) CHECK(addrs[i] == 0x1000ull * (i + 1));
}

TEST_CASE("lost records are counted, truncated ones stop the read", "[perf]") {
  FakeRing ring(4096);
  ring.sample(1, 1, 1, 0x1000, 0, 0);
  ring.lost(17);
  ring.sample(1, 1, 1, 0x2000, 0, 0);
  auto stats = ring.reader().drain([](const Sample&) {});
  CHECK(stats.samples == 2);
  CHECK(stats.lost == 17);

  // A header that claims more than the ring holds: nothing after it can be trusted.
  perf_event_header bad{PERF_RECORD_SAMPLE, 0, 2000};
  ring.put(&bad, sizeof bad);
  ring.put("xxxxxxxx", 8);
  auto after = ring.reader().drain([](const Sample&) { FAIL("no sample expected"); });
  CHECK(after.truncated == 1);
  CHECK(ring.meta.data_tail == ring.meta.data_head);

  // A sample record too short for its sample_type.
  perf_event_header shortRec{PERF_RECORD_SAMPLE, 0, sizeof(perf_event_header) + 8};
  uint64_t ip = 5;
  ring.put(&shortRec, sizeof shortRec);
  ring.put(&ip, 8);
  CHECK(ring.reader().drain([](const Sample&) {}).truncated == 1);
}

TEST_CASE("a drain reads up to its cap and drops the records after it", "[perf]") {
  FakeRing ring(4096);
  for (int i = 0; i < 10; ++i) ring.sample(1, 1, 1, 0x1000 * (i + 1), 0, 0);
  std::vector<uint64_t> addrs;
  auto stats = ring.reader().drain([&](const Sample& s) { addrs.push_back(s.addr); }, 4);
  CHECK(stats.samples == 4);
  CHECK(addrs == std::vector<uint64_t>{0x1000, 0x2000, 0x3000, 0x4000});
  CHECK(stats.skippedBytes == 6 * (sizeof(perf_event_header) + 40));  // six 48-byte records
  CHECK(ring.meta.data_tail == ring.meta.data_head);
  CHECK(ring.reader().drain([](const Sample&) {}, 4).skippedBytes == 0);  // nothing left, nothing dropped
}

TEST_CASE("the data source says which memory served a load", "[perf]") {
  perf_mem_data_src src{};
  src.mem_lvl_num = PERF_MEM_LVLNUM_RAM;
  CHECK(decodeDataSource(src.val) == ServedBy::LocalDram);
  src.mem_remote = 1;
  CHECK(decodeDataSource(src.val) == ServedBy::RemoteDram);
  src.val = 0;
  src.mem_lvl_num = 0x09;  // PERF_MEM_LVLNUM_CXL
  CHECK(decodeDataSource(src.val) == ServedBy::Cxl);
  src.val = 0;
  src.mem_lvl_num = PERF_MEM_LVLNUM_PMEM;
  CHECK(decodeDataSource(src.val) == ServedBy::Pmem);
  src.val = 0;
  src.mem_lvl_num = PERF_MEM_LVLNUM_L3;
  CHECK(decodeDataSource(src.val) == ServedBy::Cache);
  // The older level bits, where the level number is not filled in.
  src.val = 0;
  src.mem_lvl_num = PERF_MEM_LVLNUM_NA;
  src.mem_lvl = PERF_MEM_LVL_HIT | PERF_MEM_LVL_REM_RAM1;
  CHECK(decodeDataSource(src.val) == ServedBy::RemoteDram);
  src.mem_lvl = PERF_MEM_LVL_NA;
  CHECK(decodeDataSource(src.val) == ServedBy::Unknown);
  CHECK(std::string(servedByName(ServedBy::Cxl)) == "cxl");
}
