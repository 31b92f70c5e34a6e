// A pool striped over several devices (files here): where its bytes land, and the checks that
// refuse the devices in another order, in part, or another pool's.

#include <fcntl.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <cstring>
#include <memory>

#include "Pool.h"
#include "Ranks.h"

using cxlccl::Pool;
using cxlccl::PoolFormat;
using cxlccl::test::TempPool;

namespace {

std::string readFile(const std::string& path, std::uint64_t offset, std::size_t n) {
  std::string out(n, '\0');
  int fd = open(path.c_str(), O_RDONLY);
  REQUIRE(fd >= 0);
  REQUIRE(pread(fd, out.data(), n, static_cast<off_t>(offset)) == static_cast<ssize_t>(n));
  close(fd);
  return out;
}

}  // namespace

TEST_CASE("a pool striped over files puts alternate stripes on each", "[cxl]") {
  TempPool files(2);
  std::shared_ptr<Pool> pool;
  cxlccl::Status status = Pool::open(files.path(), 64u << 20, &pool);
  INFO(status.message);
  REQUIRE(status.ok());
  const cxlccl::PoolMapping& m = pool->mapping();
  REQUIRE(m.devices() == 2);
  CHECK(m.stripeBytes() == cxlccl::kPoolAlign);
  CHECK(pool->bytes() == 64u << 20);
  // The header on the first file, the label of the second at its start.
  CHECK(readFile(files.files()[0], 0, 8) == "CXLCCLPL");
  CHECK(readFile(files.files()[1], 0, 8) == "CXLCCLST");
  // Bytes written through the pool land in the file and at the offset the striping says.
  for (std::uint64_t stripe = 2; stripe < 8; ++stripe) {
    std::uint64_t offset = stripe * m.stripeBytes() + 4096 + stripe;
    std::string mark = "stripe " + std::to_string(stripe);
    std::memcpy(pool->base() + offset, mark.data(), mark.size());
    int device = m.deviceOf(offset);
    CHECK(device == static_cast<int>(stripe % 2));
    CHECK(m.deviceOffset(offset) == stripe / 2 * m.stripeBytes() + 4096 + stripe);
    CHECK(readFile(files.files()[static_cast<std::size_t>(device)], m.deviceOffset(offset), mark.size()) == mark);
  }
}

TEST_CASE("a striped pool given in another order or in part is refused", "[cxl]") {
  TempPool files(2);
  REQUIRE(Pool::format(files.path(), 16u << 20, PoolFormat{true}).ok());
  std::shared_ptr<Pool> pool;
  cxlccl::Status swapped = Pool::open(files.files()[1] + "," + files.files()[0], 0, &pool);
  CHECK(!swapped.ok());
  CHECK_THAT(swapped.message, Catch::Contains("is device 1 of a striped pool, not its first"));
  cxlccl::Status part = Pool::open(files.files()[0], 0, &pool);
  CHECK(!part.ok());
  CHECK_THAT(part.message, Catch::Contains("striped over 2 device(s), and 1 given"));
  // The second file of another pool in place of this one's.
  TempPool other(2);
  REQUIRE(Pool::format(other.path(), 16u << 20, PoolFormat{true}).ok());
  cxlccl::Status foreign = Pool::open(files.files()[0] + "," + other.files()[1], 0, &pool);
  CHECK(!foreign.ok());
  CHECK_THAT(foreign.message, Catch::Contains("is not device 1 of the pool"));
  cxlccl::Status twice = Pool::open(files.files()[0] + "," + files.files()[0], 0, &pool);
  CHECK_THAT(twice.message, Catch::Contains("different paths"));
  CHECK(Pool::open(files.path(), 0, &pool).ok());
}
