#pragma once
// A communicator's settings: the caller's cxlcclConfig_t, else the environment, else defaults;
// and what the environment says about rank, size and job (MPI, PMI, Slurm, torchrun).

#include <cstdint>
#include <optional>
#include <string>

#include "DirectReads.h"
#include "Layout.h"
#include "RegionView.h"
#include "Status.h"

namespace cxlccl {

enum class DeltaMode { off, on, automatic };

struct Options {
  std::optional<Coherence> coherence;  // empty: the pool's header decides
  int timeoutMs = 30000;
  int heartbeatTimeoutMs = 2000;
  LayoutParams layout;  // nranks set at init
  int copyThreads = 0;  // 0: chosen at init from the CPUs per rank on this host
  DeltaMode delta = DeltaMode::off;
  bool deltaTimed = true;                     // auto weighs the calls' times too, not only the share of lines changed
  DirectMode direct = DirectMode::automatic;  // same-host direct reads (CXLCCL_DIRECT)
};

Status resolveOptions(const cxlcclConfig_t* config, Options* out);

// The pool path ($CXLCCL_POOL, default /dev/shm/cxlccl.pool) and the size a new file pool gets
// ($CXLCCL_POOL_SIZE, default 1 GiB; sizes take K/M/G suffixes).
std::string poolPath();
Status poolCreateBytes(std::uint64_t* bytes);

struct EnvRanks {
  int rank = -1;
  int nranks = -1;
  std::string jobId;
  std::string source;  // which variables said so, for messages
};
Status ranksFromEnv(EnvRanks* out);

// Parses "512", "64K", "256KiB", "1G".
bool parseSize(const std::string& text, std::uint64_t* bytes);

}  // namespace cxlccl
