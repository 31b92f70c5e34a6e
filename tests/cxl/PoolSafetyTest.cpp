// A pool is never a way into another user's job: new pools are their owner's (or a named
// group's), every field read from a pool is checked before it is used, tools that look do not
// create or write, and a peer that dies on this host is known at once.

#include <catch2/catch.hpp>

#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "Pool.h"
#include "Ranks.h"
#include "Run.h"
#include "Skip.h"

using namespace cxlccl::test;

namespace {

// The on-pool layout the corruption cases write to (Pool.cpp): the header at 0, the region table
// at 4 KiB, 64 bytes an entry.
constexpr off_t kHeaderBytesField = 16;
constexpr off_t kTable = 4096;
constexpr off_t kEntryOffset = 16, kEntryBytes = 24, kEntryNranks = 44;

void poke(const std::string& path, off_t at, const void* value, std::size_t size) {
  int fd = open(path.c_str(), O_RDWR);
  REQUIRE(fd >= 0);
  REQUIRE(pwrite(fd, value, size, at) == static_cast<ssize_t>(size));
  close(fd);
}
template <typename T>
void poke(const std::string& path, off_t at, T value) {
  poke(path, at, &value, sizeof value);
}

// A command line that runs the one after it as nobody.
const std::vector<std::string> kAsNobody{"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"};

// cxlccl-pool VERB... POOL, run through `asUser` where given.
mtm::test::RunResult poolTool(const std::vector<std::string>& verb, const std::string& pool, const std::vector<std::string>& asUser = {}) {
  std::vector<std::string> argv = asUser;
  argv.push_back(std::string(CXLCCL_TOOLS_DIR) + "/cxlccl-pool");
  argv.insert(argv.end(), verb.begin(), verb.end());
  argv.push_back(pool);
  return mtm::test::run(argv);
}

// A formatted pool with one communicator-sized region allocated in it.
void poolWithRegion(const std::string& path) {
  std::shared_ptr<cxlccl::Pool> pool;
  REQUIRE(cxlccl::Pool::open(path, 64 << 20, &pool).ok());
  cxlccl::RegionInfo region;
  REQUIRE(pool->allocate({1, 2}, 4 << 20, 2, &region).ok());
}

std::string openError(const std::string& path) {
  std::shared_ptr<cxlccl::Pool> pool;
  cxlccl::Status status = cxlccl::Pool::openExisting(path, false, &pool);
  return status.ok() ? "" : status.message;
}

double monotonicMs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) / 1e6;
}

}  // namespace

TEST_CASE("a new pool file is its owner's alone, or a named group's -- never everyone's", "[cxl][pool]") {
  TempPool pool;
  const mode_t old = umask(0);  // the mode must not depend on the umask
  {
    std::shared_ptr<cxlccl::Pool> p;
    REQUIRE(cxlccl::Pool::open(pool.path(), 8 << 20, &p).ok());
  }
  struct stat st;
  REQUIRE(stat(pool.path().c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  unlink(pool.path().c_str());

  setenv("CXLCCL_POOL_GROUP", std::to_string(getgid()).c_str(), 1);
  {
    std::shared_ptr<cxlccl::Pool> p;
    REQUIRE(cxlccl::Pool::open(pool.path(), 8 << 20, &p).ok());
  }
  REQUIRE(stat(pool.path().c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0660);
  CHECK(st.st_gid == getgid());
  unlink(pool.path().c_str());

  setenv("CXLCCL_POOL_GROUP", "no-such-group-cxlccl", 1);
  std::shared_ptr<cxlccl::Pool> p;
  cxlccl::Status status = cxlccl::Pool::open(pool.path(), 8 << 20, &p);
  CHECK_FALSE(status.ok());
  CHECK(status.message.find("CXLCCL_POOL_GROUP=no-such-group-cxlccl: no such group") != std::string::npos);
  CHECK(access(pool.path().c_str(), F_OK) != 0);  // nothing made
  unsetenv("CXLCCL_POOL_GROUP");
  umask(old);
}

TEST_CASE("every region-table field out of range is an error naming the pool, the entry and the field", "[cxl][pool]") {
  TempPool pool;
  struct Case {
    const char* name;
    off_t at;
    std::uint64_t value;
    std::size_t size;
    const char* says;
  };
  const Case cases[] = {
      {"offset past the end", kEntryOffset, 1ull << 40, 8, "offset = 1099511627776"},
      {"offset inside the header", kEntryOffset, 0, 8, "offset = 0"},
      {"offset not 2 MiB-aligned", kEntryOffset, (2ull << 20) + 64, 8, "offset = 2097216"},
      {"bytes of 2^63", kEntryBytes, 1ull << 63, 8, "bytes = 9223372036854775808"},
      {"bytes past the end", kEntryBytes, 1ull << 30, 8, "bytes = 1073741824"},
      {"nranks 1000", kEntryNranks, 1000, 4, "nranks = 1000"},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    unlink(pool.path().c_str());
    poolWithRegion(pool.path());
    if (c.size == 8)
      poke(pool.path(), kTable + c.at, c.value);
    else
      poke(pool.path(), kTable + c.at, static_cast<std::uint32_t>(c.value));
    const std::string error = openError(pool.path());
    CHECK(error.find("pool " + pool.path() + ": region table entry 0: " + c.says) != std::string::npos);
    CHECK(error.find("cxlccl-pool format") != std::string::npos);
    // The tools say so too, and exit 1 -- no signal.
    for (const std::vector<std::string>& verb : std::vector<std::vector<std::string>>{{"info"}, {"reclaim", "--wait-ms", "1"}}) {
      const mtm::test::RunResult r = poolTool(verb, pool.path());
      CHECK(r.exitCode == 1);
      CHECK((r.out + r.err).find(c.says) != std::string::npos);
    }
    // So does a rank that would use the pool.
    cxlcclUniqueId id;
    CHECK(cxlcclGetUniqueId(&id) == cxlcclInvalidUsage);
    CHECK(std::string(cxlcclGetLastError(nullptr)).find(c.says) != std::string::npos);
  }
}

TEST_CASE("a header whose size does not fit the pool is refused", "[cxl][pool]") {
  TempPool pool;
  for (std::uint64_t bytes : {1ull << 63, 0ull, (64ull << 20) + 4096}) {
    INFO(bytes);
    unlink(pool.path().c_str());
    poolWithRegion(pool.path());
    poke(pool.path(), kHeaderBytesField, bytes);
    CHECK(openError(pool.path()).find("does not fit its") != std::string::npos);
    const mtm::test::RunResult r = poolTool({"info"}, pool.path());
    CHECK(r.exitCode == 1);
    CHECK((r.out + r.err).find("reformat it") != std::string::npos);
  }
}

TEST_CASE("cxlccl-pool info shows a corrupt communicator header as an error, not a crash", "[cxl][pool]") {
  TempPool pool;
  poolWithRegion(pool.path());
  std::shared_ptr<cxlccl::Pool> p;
  REQUIRE(cxlccl::Pool::openExisting(pool.path(), false, &p).ok());
  const auto regions = p->regions();
  REQUIRE(regions.size() == 1);
  const off_t region = static_cast<off_t>(regions[0].offset);
  poke(pool.path(), region, 0x344d4d4f434c4343ull);    // kCommMagic: a communicator's header
  poke(pool.path(), region + 16, std::uint64_t{64});   // nranks
  poke(pool.path(), region + 24, std::uint64_t{128});  // lineBytes
  poke(pool.path(), region + 32, 1ull << 40);          // chunkBytes: far past the region
  poke(pool.path(), region + 40, std::uint64_t{8});    // chunks
  const mtm::test::RunResult r = poolTool({"info"}, pool.path());
  CHECK(r.exitCode == 0);
  CHECK((r.out + r.err).find("communicator header field chunkBytes = 1099511627776") != std::string::npos);
}

TEST_CASE("cxlccl-pool info creates nothing and needs no write access", "[cxl][pool]") {
  const std::string missing = "/dev/shm/cxlccl-test-missing-" + std::to_string(getpid());
  mtm::test::RunResult r = poolTool({"info"}, missing);
  CHECK(r.exitCode == 1);
  CHECK((r.out + r.err).find("does not exist (nothing was created)") != std::string::npos);
  CHECK(access(missing.c_str(), F_OK) != 0);

  TempPool pool;
  poolWithRegion(pool.path());
  MTM_REQUIRE_ROOT("switching users, to read a pool one may not write");
  // Readable by everyone, writable by its owner (root) only: nobody can look, not change.
  REQUIRE(chmod(pool.path().c_str(), 0644) == 0);
  r = poolTool({"info"}, pool.path(), kAsNobody);
  CHECK(r.exitCode == 0);
  CHECK((r.out + r.err).find("pool " + pool.path() + ":") != std::string::npos);
  r = poolTool({"reclaim", "--wait-ms", "1"}, pool.path(), kAsNobody);
  CHECK(r.exitCode == 1);
  CHECK((r.out + r.err).find("permission denied (it belongs to uid 0") != std::string::npos);
}

TEST_CASE("a killed peer on this host is known within a second, long before its heartbeat would tell", "[cxl][pool]") {
  TempPool pool;
  // When rank 1 died, for rank 0 to read: shared by the forked ranks.
  auto* killedAt = static_cast<std::atomic<double>*>(
      mmap(nullptr, sizeof(std::atomic<double>), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  REQUIRE(killedAt != MAP_FAILED);
  killedAt->store(0);
  cxlcclUniqueId id;
  REQUIRE(cxlcclGetUniqueId(&id) == cxlcclSuccess);
  std::vector<int> codes = runRanks(2, [&](int rank) {
    cxlcclConfig_t config = CXLCCL_CONFIG_INITIALIZER;
    config.timeoutMs = 60000;
    config.heartbeatTimeoutMs = 30000;  // the heartbeat alone would take 30 s
    cxlcclComm_t comm = nullptr;
    if (cxlcclCommInitRankConfig(&comm, 2, id, rank, &config) != cxlcclSuccess) return 1;
    if (rank == 1) {
      usleep(200000);  // rank 0 is waiting in the AllGather by now
      killedAt->store(monotonicMs());
      raise(SIGKILL);
    }
    std::vector<int> send(4, rank), recv(8);
    cxlcclResult_t result = cxlcclAllGather(send.data(), recv.data(), 4, cxlcclInt32, comm, nullptr);
    const double latency = monotonicMs() - killedAt->load();
    std::fprintf(stderr, "peer death seen after %.1f ms\n", latency);
    const bool said = std::string(cxlcclGetLastError(comm)).find("exited while this rank waits on it") != std::string::npos;
    cxlcclCommAbort(comm);
    return result == cxlcclRemoteError && said ? (latency < 1000 ? 0 : 3) : 2;
  });
  CHECK(codes[0] == 0);
  CHECK(codes[1] == 128 + SIGKILL);
  munmap(killedAt, sizeof(std::atomic<double>));
}
