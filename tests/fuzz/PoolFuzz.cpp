// Fuzz target: a pool image as a hostile local user could leave it -- the header, the first
// entries of the region table, a communicator's header -- read the way libcxlccl and
// cxlccl-pool read it: Pool::openExisting, the table, free space, a lookup, an allocation and a
// release, and each region's communicator header through checkLayoutParams before its rank lines.
// Nothing may crash, read outside the mapping, or hang.
//
// Input: bytes [0, 4 KiB) are the header page, the next 1 KiB the first 16 table entries (the
// rest of the table stays free), and whatever follows lands at 2 MiB, where regions start.
//
// Built with libFuzzer by tools/fuzz pool (clang: -fsanitize=fuzzer,address,undefined). Built
// without it (ctest: "fuzz: pool corpus"), main() replays the files or directories it is given
// (FuzzReplay.cpp); `--write-seeds DIR` writes the seed corpus (tests/fuzz/corpus/pool) from real pools.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "FuzzReplay.h"
#include "Layout.h"
#include "Pool.h"

namespace {

constexpr std::size_t kHeaderPage = 4096, kTableBytes = 16 * 64, kDataAt = 2u << 20;
constexpr std::size_t kPoolBytes = 8u << 20;

const std::string& poolPath() {
  static const std::string path = [] {
    std::atexit([] { unlink(("/dev/shm/cxlccl-fuzz-" + std::to_string(getpid())).c_str()); });
    return "/dev/shm/cxlccl-fuzz-" + std::to_string(getpid());
  }();
  return path;
}

// The image: a fresh 8 MiB file holding the input where the layout above puts it.
bool writeImage(const std::uint8_t* data, std::size_t size) {
  int fd = open(poolPath().c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  bool ok = ftruncate(fd, kPoolBytes) == 0;
  const std::size_t front = std::min(size, kHeaderPage + kTableBytes);
  ok = ok && pwrite(fd, data, front, 0) == static_cast<ssize_t>(front);
  if (size > front) {
    const std::size_t rest = std::min(size - front, kPoolBytes - kDataAt);
    ok = ok && pwrite(fd, data + front, rest, kDataAt) == static_cast<ssize_t>(rest);
  }
  close(fd);
  return ok;
}

std::uint64_t word(const std::byte* at) {
  std::uint64_t v;
  std::memcpy(&v, at, sizeof v);
  return v;
}

// What cxlccl-pool info reads of a region: its communicator's header, then its rank lines.
std::uint64_t readRanks(const cxlccl::Pool& pool, const cxlccl::RegionInfo& region) {
  const std::byte* base = pool.base() + region.offset;
  if (word(base + cxlccl::field::magic) != cxlccl::kCommMagic) return 0;
  const cxlccl::LayoutParams params = cxlccl::layoutParamsOf(base);
  if (!cxlccl::checkLayoutParams(params, region.bytes, "fuzz").ok()) return 0;
  cxlccl::Layout layout(params);
  std::uint64_t sum = 0;
  for (int r = 0; r < params.nranks; ++r) sum += word(base + layout.rankLine(r) + cxlccl::field::heartbeat);
  return sum;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (!writeImage(data, size)) return 0;
  std::shared_ptr<cxlccl::Pool> pool;
  if (!cxlccl::Pool::openExisting(poolPath(), true, &pool).ok()) return 0;
  volatile std::uint64_t sink = pool->freeBytes();
  for (const cxlccl::RegionInfo& region : pool->regions()) sink = sink + readRanks(*pool, region);
  cxlccl::RegionInfo found;
  (void)pool->find({1, 2}, &found);
  cxlccl::RegionInfo made;
  if (pool->allocate({3, 4}, 2u << 20, 2, &made).ok()) (void)pool->release(made);
  return 0;
}

#ifndef CXLCCL_LIBFUZZER
namespace {

// Seeds from real pools: a fresh one, one with a communicator's region (header and rank lines
// as a rank writes them), one with a buffer.
int writeSeeds(const std::string& dir) {
  const std::string path = poolPath();
  auto image = [&](const std::string& name, std::size_t regionBytes) {
    std::vector<std::uint8_t> all(kPoolBytes);
    int fd = open(path.c_str(), O_RDONLY);
    if (fd < 0 || pread(fd, all.data(), all.size(), 0) != static_cast<ssize_t>(all.size())) return false;
    close(fd);
    std::vector<std::uint8_t> seed(all.begin(), all.begin() + kHeaderPage + kTableBytes);
    seed.insert(seed.end(), all.begin() + kDataAt, all.begin() + kDataAt + regionBytes);
    std::ofstream(dir + "/" + name, std::ios::binary)
        .write(reinterpret_cast<const char*>(seed.data()), static_cast<std::streamsize>(seed.size()));
    return true;
  };
  unlink(path.c_str());
  std::shared_ptr<cxlccl::Pool> pool;
  if (!cxlccl::Pool::open(path, kPoolBytes, &pool).ok() || !image("empty", 0)) return 1;
  cxlccl::RegionInfo comm;
  if (!pool->allocate({1, 2}, 2u << 20, 2, &comm).ok()) return 1;
  cxlccl::LayoutParams params{2, 128, 16384, 2};
  cxlccl::Layout layout(params);
  std::byte* base = pool->base() + comm.offset;
  const std::uint64_t header[] = {cxlccl::kCommMagic, 1, 2, 128, 16384, 2, 2};
  std::memcpy(base, header, sizeof header);
  for (int r = 0; r < 2; ++r) {
    const std::uint64_t line[] = {1, 7, 1000u + static_cast<unsigned>(r)};
    std::memcpy(base + layout.rankLine(r), line, sizeof line);
  }
  if (!image("communicator", layout.controlBytes())) return 1;
  cxlccl::RegionInfo buffer;
  if (!pool->allocate({5, 6}, 2u << 20, 0, &buffer).ok() || !image("communicator-and-buffer", layout.controlBytes())) return 1;
  unlink(path.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::string(argv[1]) == "--write-seeds") return writeSeeds(argv[2]);
  const int rc = replayFuzzInputs(argc, argv);
  unlink(poolPath().c_str());
  return rc;
}
#endif
