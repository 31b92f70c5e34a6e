#pragma once
// Helpers for libcxlccl tests: ranks as forked processes sharing a pool file on /dev/shm, and
// typed fills and checks.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "cxlccl.h"

namespace cxlccl::test {

// A pool file of its own for one test (or `devices` files to stripe over), removed at the end;
// CXLCCL_POOL points at it meanwhile.
class TempPool {
 public:
  explicit TempPool(int devices = 1);
  ~TempPool();
  const std::string& path() const { return path_; }  // the files, separated by commas
  const std::vector<std::string>& files() const { return files_; }

 private:
  std::string path_;
  std::vector<std::string> files_;
};

// Sets an environment variable for the ranks of one test case (they are forked after), and
// unsets it at the end.
struct ScopedEnv {
  std::string name;
  ScopedEnv(const char* variable, const std::string& value) : name(variable) { setenv(variable, value.c_str(), 1); }
  ~ScopedEnv() { unsetenv(name.c_str()); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;
};

// Runs `body(rank)` in `nranks` forked processes; each one's exit status (128 + signal when
// killed). A rank still running after `seconds` is killed (SIGKILL), so a hang fails, not blocks.
std::vector<int> runRanks(int nranks, const std::function<int(int rank)>& body, int seconds = 120);

// Rank `rank` of a communicator of `nranks` made with `config`; null, its error printed, when
// that fails.
cxlcclComm_t initRankWith(const cxlcclUniqueId& id, int nranks, int rank, const cxlcclConfig_t& config);

// The value element i of `rank`'s buffer holds in case `seed`: small integers (non-negative for
// unsigned types), so every sum and product the tests make is exact in every type, fp16 and bf16
// included; products of 1, 2 and -1 stay within 2^8.
std::int64_t inputValue(int rank, std::size_t i, std::uint64_t seed, bool forProduct, cxlcclDataType_t type);
void fill(void* buffer, cxlcclDataType_t type, const std::vector<std::int64_t>& values);
// The index of the first element that differs from `values`, or -1.
long long firstMismatch(const void* buffer, cxlcclDataType_t type, const std::vector<std::int64_t>& values);
// What `op` makes of a and b in `type`'s arithmetic (integers wrap like the library's).
std::int64_t reduceRef(std::int64_t a, std::int64_t b, cxlcclRedOp_t op, cxlcclDataType_t type);

std::size_t elementBytes(cxlcclDataType_t type);

}  // namespace cxlccl::test
