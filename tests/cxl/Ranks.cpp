#include "Ranks.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bit>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace cxlccl::test {
namespace {

template <typename T>
T narrow(std::int64_t v) {
  return static_cast<T>(v);
}

std::uint16_t toBf16(float f) {
  auto u = std::bit_cast<std::uint32_t>(f);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<std::uint16_t>(u >> 16);
}

void store(void* buffer, cxlcclDataType_t type, std::size_t i, std::int64_t v) {
  switch (type) {
    case cxlcclInt8:
      static_cast<std::int8_t*>(buffer)[i] = narrow<std::int8_t>(v);
      break;
    case cxlcclUint8:
      static_cast<std::uint8_t*>(buffer)[i] = narrow<std::uint8_t>(v);
      break;
    case cxlcclInt32:
      static_cast<std::int32_t*>(buffer)[i] = narrow<std::int32_t>(v);
      break;
    case cxlcclUint32:
      static_cast<std::uint32_t*>(buffer)[i] = narrow<std::uint32_t>(v);
      break;
    case cxlcclInt64:
      static_cast<std::int64_t*>(buffer)[i] = v;
      break;
    case cxlcclUint64:
      static_cast<std::uint64_t*>(buffer)[i] = static_cast<std::uint64_t>(v);
      break;
    case cxlcclFloat16:
      static_cast<_Float16*>(buffer)[i] = static_cast<_Float16>(v);
      break;
    case cxlcclFloat32:
      static_cast<float*>(buffer)[i] = static_cast<float>(v);
      break;
    case cxlcclFloat64:
      static_cast<double*>(buffer)[i] = static_cast<double>(v);
      break;
    case cxlcclBfloat16:
      static_cast<std::uint16_t*>(buffer)[i] = toBf16(static_cast<float>(v));
      break;
    default:
      break;
  }
}

bool equals(const void* buffer, cxlcclDataType_t type, std::size_t i, std::int64_t v) {
  switch (type) {
    case cxlcclInt8:
      return static_cast<const std::int8_t*>(buffer)[i] == narrow<std::int8_t>(v);
    case cxlcclUint8:
      return static_cast<const std::uint8_t*>(buffer)[i] == narrow<std::uint8_t>(v);
    case cxlcclInt32:
      return static_cast<const std::int32_t*>(buffer)[i] == narrow<std::int32_t>(v);
    case cxlcclUint32:
      return static_cast<const std::uint32_t*>(buffer)[i] == narrow<std::uint32_t>(v);
    case cxlcclInt64:
      return static_cast<const std::int64_t*>(buffer)[i] == v;
    case cxlcclUint64:
      return static_cast<const std::uint64_t*>(buffer)[i] == static_cast<std::uint64_t>(v);
    case cxlcclFloat16:
      return static_cast<const _Float16*>(buffer)[i] == static_cast<_Float16>(v);
    case cxlcclFloat32:
      return static_cast<const float*>(buffer)[i] == static_cast<float>(v);
    case cxlcclFloat64:
      return static_cast<const double*>(buffer)[i] == static_cast<double>(v);
    case cxlcclBfloat16:
      return static_cast<const std::uint16_t*>(buffer)[i] == toBf16(static_cast<float>(v));
    default:
      return false;
  }
}

bool isUnsigned(cxlcclDataType_t type) { return type == cxlcclUint8 || type == cxlcclUint32 || type == cxlcclUint64; }

}  // namespace

TempPool::TempPool(int devices) {
  // Short names when striped: a unique id holds the whole comma-separated list in 95 bytes.
  static int made = 0;
  std::string stem = "/dev/shm/cxlccl-test-" + std::to_string(getpid()) + "-" +
                     (devices == 1 ? std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()) : std::to_string(++made));
  for (int d = 0; d < devices; ++d) {
    files_.push_back(devices == 1 ? stem : stem + "." + std::to_string(d));
    path_ += (d == 0 ? "" : ",") + files_.back();
  }
  setenv("CXLCCL_POOL", path_.c_str(), 1);
  setenv("CXLCCL_POOL_SIZE", "512M", 1);
}

TempPool::~TempPool() {
  for (const std::string& file : files_) unlink(file.c_str());
  unsetenv("CXLCCL_POOL");
}

cxlcclComm_t initRankWith(const cxlcclUniqueId& id, int nranks, int rank, const cxlcclConfig_t& config) {
  cxlcclComm_t comm = nullptr;
  if (cxlcclCommInitRankConfig(&comm, nranks, id, rank, &config) == cxlcclSuccess) return comm;
  std::fprintf(stderr, "rank %d: init: %s\n", rank, cxlcclGetLastError(nullptr));
  return nullptr;
}

std::vector<int> runRanks(int nranks, const std::function<int(int rank)>& body, int seconds) {
  std::vector<pid_t> pids;
  for (int rank = 0; rank < nranks; ++rank) {
    pid_t pid = fork();
    if (pid == 0) {
      int code = 99;
      try {
        code = body(rank);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "rank %d: exception: %s\n", rank, e.what());
      }
      std::fflush(stderr);
      _exit(code);
    }
    pids.push_back(pid);
  }
  std::vector<int> codes(pids.size(), -1);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  std::size_t left = pids.size();
  while (left > 0) {
    for (std::size_t i = 0; i < pids.size(); ++i) {
      if (codes[i] != -1) continue;
      int status = 0;
      if (waitpid(pids[i], &status, WNOHANG) != pids[i]) continue;
      codes[i] = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      --left;
    }
    if (left == 0) break;
    if (std::chrono::steady_clock::now() > deadline) {
      for (std::size_t i = 0; i < pids.size(); ++i) {
        if (codes[i] == -1) {
          std::fprintf(stderr, "rank %zu still running after %d s: killed\n", i, seconds);
          kill(pids[i], SIGKILL);
        }
      }
      deadline = std::chrono::steady_clock::now() + std::chrono::hours(1);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return codes;
}

std::int64_t inputValue(int rank, std::size_t i, std::uint64_t seed, bool forProduct, cxlcclDataType_t type) {
  std::uint64_t h = (static_cast<std::uint64_t>(rank) * 0x9e3779b97f4a7c15ull) ^ (i * 0xbf58476d1ce4e5b9ull) ^ seed;
  h ^= h >> 31;
  if (forProduct) {
    static const std::int64_t kFactors[] = {1, 2, -1, 1};
    std::int64_t v = kFactors[h % 4];
    return isUnsigned(type) ? std::abs(v) : v;
  }
  std::int64_t v = static_cast<std::int64_t>(h % 9) - 4;
  return isUnsigned(type) ? std::abs(v) : v;
}

void fill(void* buffer, cxlcclDataType_t type, const std::vector<std::int64_t>& values) {
  for (std::size_t i = 0; i < values.size(); ++i) store(buffer, type, i, values[i]);
}

long long firstMismatch(const void* buffer, cxlcclDataType_t type, const std::vector<std::int64_t>& values) {
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (!equals(buffer, type, i, values[i])) return static_cast<long long>(i);
  }
  return -1;
}

std::int64_t reduceRef(std::int64_t a, std::int64_t b, cxlcclRedOp_t op, cxlcclDataType_t type) {
  (void)type;
  switch (op) {
    case cxlcclSum:
      return a + b;
    case cxlcclProd:
      return a * b;
    case cxlcclMax:
      return std::max(a, b);
    case cxlcclMin:
      return std::min(a, b);
    default:
      return 0;
  }
}

std::size_t elementBytes(cxlcclDataType_t type) {
  switch (type) {
    case cxlcclInt8:
    case cxlcclUint8:
      return 1;
    case cxlcclFloat16:
    case cxlcclBfloat16:
      return 2;
    case cxlcclInt32:
    case cxlcclUint32:
    case cxlcclFloat32:
      return 4;
    default:
      return 8;
  }
}

}  // namespace cxlccl::test
