#include "Options.h"

#include <strings.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <string>

namespace cxlccl {
namespace {

const char* env(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : nullptr;
}

bool parseInt(const char* text, long long* out) {
  errno = 0;
  char* end = nullptr;
  long long value = std::strtoll(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0') return false;
  *out = value;
  return true;
}

// An int setting: the config's value unless undefined, else the variable, else the default;
// then its range.
Status intSetting(int configValue, const char* variable, int fallback, int low, int high, const char* field, int* out) {
  long long value = fallback;
  std::string origin = "default";
  if (configValue != CXLCCL_CONFIG_UNDEF_INT) {
    value = configValue;
    origin = cat("config.", field);
  } else if (const char* text = env(variable)) {
    if (!parseInt(text, &value)) return Status::error(cxlcclInvalidArgument, variable, "=", text, ": expected an integer");
    origin = variable;
  }
  if (value < low || value > high) return Status::error(cxlcclInvalidArgument, origin, " = ", value, ": expected ", low, "..", high);
  *out = static_cast<int>(value);
  return Status::success();
}

// A setting that is one of `names`, its index the value of its enum in cxlccl.h: the config's
// value unless undefined, else the variable's name, else `fallback`; the index is in *out.
Status choiceSetting(int configValue, const char* variable, const char* field, const char* typeName,
                     std::initializer_list<const char*> names, int fallback, int* out) {
  const int count = static_cast<int>(names.size());
  int value = fallback;
  if (configValue != CXLCCL_CONFIG_UNDEF_INT) {
    value = configValue;
  } else if (const char* text = env(variable)) {
    const auto* found = std::find_if(names.begin(), names.end(), [&](const char* name) { return strcasecmp(text, name) == 0; });
    if (found == names.end()) {
      std::string expected;
      for (int i = 0; i < count; ++i) expected += cat(i == 0 ? "" : i == count - 1 ? " or " : ", ", names.begin()[i]);
      return Status::error(cxlcclInvalidArgument, variable, "=", text, ": expected ", expected);
    }
    value = static_cast<int>(found - names.begin());
  }
  if (value < 0 || value >= count)
    return Status::error(cxlcclInvalidArgument, "config.", field, " = ", value, ": expected a ", typeName, " (0..", count - 1, ")");
  *out = value;
  return Status::success();
}

Status coherenceSetting(int configValue, std::optional<Coherence>* out) {
  int value = 0;
  CXLCCL_TRY(choiceSetting(configValue, "CXLCCL_COHERENCE", "coherence", "cxlcclCoherence_t", {"pool", "hardware", "flush", "simulate"},
                           cxlcclCoherencePool, &value));
  switch (value) {
    case cxlcclCoherencePool:
      out->reset();
      break;
    case cxlcclCoherenceHardware:
      *out = Coherence::hardware;
      break;
    case cxlcclCoherenceFlush:
      *out = Coherence::flush;
      break;
    default:
      *out = Coherence::simulate;
      break;
  }
  return Status::success();
}

Status deltaSetting(int configValue, DeltaMode* out) {
  int value = 0;
  CXLCCL_TRY(choiceSetting(configValue, "CXLCCL_DELTA", "delta", "cxlcclDelta_t", {"off", "on", "auto"}, cxlcclDeltaOff, &value));
  *out = value == cxlcclDeltaOff ? DeltaMode::off : value == cxlcclDeltaOn ? DeltaMode::on : DeltaMode::automatic;
  return Status::success();
}

// CXLCCL_DIRECT (no config field: set it for the job): off, on, or auto (timed at creation).
Status directSetting(DirectMode* out) {
  int value = 2;
  CXLCCL_TRY(choiceSetting(CXLCCL_CONFIG_UNDEF_INT, "CXLCCL_DIRECT", "", "", {"off", "on", "auto"}, 2, &value));
  *out = value == 0 ? DirectMode::off : value == 1 ? DirectMode::on : DirectMode::automatic;
  return Status::success();
}

}  // namespace

bool parseSize(const std::string& text, std::uint64_t* bytes) {
  errno = 0;
  char* end = nullptr;
  unsigned long long value = std::strtoull(text.c_str(), &end, 10);
  if (errno != 0 || end == text.c_str() || text[0] == '-') return false;
  std::string unit(end);
  std::uint64_t scale = 1;
  if (unit.empty() || unit == "B")
    scale = 1;
  else if (strcasecmp(unit.c_str(), "K") == 0 || unit == "KiB")
    scale = 1ull << 10;
  else if (strcasecmp(unit.c_str(), "M") == 0 || unit == "MiB")
    scale = 1ull << 20;
  else if (strcasecmp(unit.c_str(), "G") == 0 || unit == "GiB")
    scale = 1ull << 30;
  else
    return false;
  if (value > UINT64_MAX / scale) return false;
  *bytes = value * scale;
  return true;
}

Status resolveOptions(const cxlcclConfig_t* config, Options* out) {
  cxlcclConfig_t defaults = CXLCCL_CONFIG_INITIALIZER;
  cxlcclConfig_t c = defaults;
  if (config != nullptr) {
    if (config->magic != CXLCCL_CONFIG_MAGIC || config->size < offsetof(cxlcclConfig_t, coherence))
      return Status::error(cxlcclInvalidArgument, "config: not initialised with CXLCCL_CONFIG_INITIALIZER (magic ", config->magic,
                           ", size ", config->size, ")");
    // Fields past the caller's size keep their defaults: an older caller's struct is shorter.
    std::memcpy(&c, config, std::min(config->size, sizeof c));
  }
  Options o;
  CXLCCL_TRY(coherenceSetting(c.coherence, &o.coherence));
  CXLCCL_TRY(intSetting(c.timeoutMs, "CXLCCL_TIMEOUT_MS", 30000, 1, 24 * 3600 * 1000, "timeoutMs", &o.timeoutMs));
  CXLCCL_TRY(intSetting(c.heartbeatTimeoutMs, "CXLCCL_HEARTBEAT_MS", 2000, 20, 3600 * 1000, "heartbeatTimeoutMs", &o.heartbeatTimeoutMs));
  int lineBytes = 0;
  CXLCCL_TRY(intSetting(c.lineBytes, "CXLCCL_LINE_BYTES", 128, 64, 4096, "lineBytes", &lineBytes));
  if ((lineBytes & (lineBytes - 1)) != 0)
    return Status::error(cxlcclInvalidArgument, "lineBytes = ", lineBytes, ": expected a power of two in 64..4096");
  o.layout.lineBytes = static_cast<std::size_t>(lineBytes);
  CXLCCL_TRY(intSetting(c.chunks, "CXLCCL_CHUNKS", 8, 2, 1024, "chunks", &o.layout.chunks));
  std::uint64_t chunkBytes = 256 << 10;
  if (c.chunkBytes != CXLCCL_CONFIG_UNDEF_SIZE) {
    chunkBytes = c.chunkBytes;
  } else if (const char* text = env("CXLCCL_CHUNK_BYTES")) {
    if (!parseSize(text, &chunkBytes))
      return Status::error(cxlcclInvalidArgument, "CXLCCL_CHUNK_BYTES=", text, ": expected a size such as 256K");
  }
  if (chunkBytes < 16384 || chunkBytes > (256u << 20) || chunkBytes % 4096 != 0)
    return Status::error(cxlcclInvalidArgument, "chunkBytes = ", chunkBytes, ": expected a multiple of 4 KiB in 16 KiB..256 MiB");
  o.layout.chunkBytes = chunkBytes;
  CXLCCL_TRY(intSetting(c.copyThreads, "CXLCCL_COPY_THREADS", 0, 0, 16, "copyThreads", &o.copyThreads));
  CXLCCL_TRY(deltaSetting(c.delta, &o.delta));
  CXLCCL_TRY(directSetting(&o.direct));
  int timed = 1;
  CXLCCL_TRY(intSetting(CXLCCL_CONFIG_UNDEF_INT, "CXLCCL_DELTA_TIMED", 1, 0, 1, "", &timed));
  o.deltaTimed = timed == 1;
  *out = o;
  return Status::success();
}

std::string poolPath() {
  const char* path = env("CXLCCL_POOL");
  return path != nullptr ? path : "/dev/shm/cxlccl.pool";
}

Status poolCreateBytes(std::uint64_t* bytes) {
  *bytes = 1ull << 30;
  const char* text = env("CXLCCL_POOL_SIZE");
  if (text != nullptr && !parseSize(text, bytes))
    return Status::error(cxlcclInvalidArgument, "CXLCCL_POOL_SIZE=", text, ": expected a size such as 1G");
  return Status::success();
}

Status ranksFromEnv(EnvRanks* out) {
  struct Source {
    const char* rank;
    const char* size;
  };
  static const Source kSources[] = {{"CXLCCL_RANK", "CXLCCL_NRANKS"}, {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
                                    {"PMI_RANK", "PMI_SIZE"},         {"PMIX_RANK", "PMIX_SIZE"},
                                    {"SLURM_PROCID", "SLURM_NTASKS"}, {"RANK", "WORLD_SIZE"}};
  EnvRanks r;
  for (const Source& s : kSources) {
    const char* rank = env(s.rank);
    const char* size = env(s.size);
    if (rank == nullptr || size == nullptr) continue;
    long long rv = 0, sv = 0;
    if (!parseInt(rank, &rv) || !parseInt(size, &sv) || sv < 1 || sv > kMaxRanks || rv < 0 || rv >= sv)
      return Status::error(cxlcclInvalidArgument, s.rank, "=", rank, " ", s.size, "=", size, ": expected 0 <= rank < size <= ", kMaxRanks);
    r.rank = static_cast<int>(rv);
    r.nranks = static_cast<int>(sv);
    r.source = cat(s.rank, "/", s.size);
    break;
  }
  if (r.rank < 0)
    return Status::error(cxlcclInvalidArgument,
                         "no rank in the environment: set CXLCCL_RANK and CXLCCL_NRANKS, or run "
                         "under mpirun, srun or torchrun");
  if (const char* id = env("CXLCCL_JOB_ID")) {
    r.jobId = id;
  } else if (const char* slurm = env("SLURM_JOB_ID")) {
    const char* step = env("SLURM_STEP_ID");
    r.jobId = cat("slurm:", slurm, ".", step != nullptr ? step : "0");
  } else if (const char* torch = env("TORCHELASTIC_RUN_ID")) {
    r.jobId = cat("torch:", torch);
  } else if (const char* ompi = env("OMPI_MCA_orte_ess_jobid")) {
    r.jobId = cat("ompi:", ompi);
  } else if (const char* pmix = env("PMIX_NAMESPACE")) {
    r.jobId = cat("pmix:", pmix);
  } else {
    // MPICH's hydra (mpirun.mpich) sets PMI_RANK/PMI_SIZE but no job id.
    const bool hydra = r.source == "PMI_RANK/PMI_SIZE";
    return Status::error(
        cxlcclInvalidArgument,
        "no job id in the environment to name the communicator: set "
        "CXLCCL_JOB_ID to the same string on every rank",
        hydra ? " (MPICH's mpirun sets none: mpirun.mpich -genv CXLCCL_JOB_ID \"$(cat /proc/sys/kernel/random/uuid)\" ...)" : "");
  }
  *out = r;
  return Status::success();
}

}  // namespace cxlccl
