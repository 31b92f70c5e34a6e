// cxlccl-pool: formats, inspects and cleans a libcxlccl pool.

#include <CLI/CLI.hpp>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <thread>

#include "CacheLines.h"
#include "Layout.h"
#include "Options.h"
#include "Pool.h"

using namespace cxlccl;

namespace {

int fail(const Status& status) {
  std::fprintf(stderr, "cxlccl-pool: %s\n", status.message.c_str());
  return 1;
}

std::uint64_t word(const std::byte* base, std::size_t offset) {
  std::uint64_t value;
  std::memcpy(&value, base + offset, sizeof value);
  return value;
}

struct RankSample {
  std::uint64_t state = 0;
  std::uint64_t heartbeat = 0;
};

// The states and heartbeats of a region's ranks, read from its rank lines.
std::vector<RankSample> sampleRanks(const Pool& pool, const RegionInfo& region) {
  const std::byte* base = pool.base() + region.offset;
  invalidateLines(base, 64);
  std::vector<RankSample> ranks;
  if (word(base, field::magic) != kCommMagic) return ranks;
  const LayoutParams params = layoutParamsOf(base);
  if (Status st = checkLayoutParams(params, region.bytes, cat("pool ", pool.path(), " region at ", region.offset)); !st.ok()) {
    std::fprintf(stderr, "cxlccl-pool: %s\n", st.message.c_str());
    return ranks;
  }
  Layout layout(params);
  for (int r = 0; r < params.nranks; ++r) {
    std::size_t line = layout.rankLine(r);
    invalidateLines(base + line, 64);
    ranks.push_back({word(base, line + field::state), word(base, line + field::heartbeat)});
  }
  return ranks;
}

const char* stateName(std::uint64_t state) {
  switch (static_cast<RankState>(state)) {
    case RankState::absent:
      return "absent";
    case RankState::active:
      return "active";
    case RankState::left:
      return "left";
    case RankState::aborted:
      return "aborted";
    case RankState::failed:
      return "failed";
  }
  return "?";
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Formats, inspects and cleans a libcxlccl pool (a device-DAX, or a file on /dev/shm "
      "or hugetlbfs, or several of them separated by commas, striped).",
      "cxlccl-pool"};
  app.set_version_flag("--version", "cxlccl-pool " MTM_VERSION);
  app.require_subcommand(1);
  std::string path;
  std::string size = "1G";
  bool coherent = false;
  int waitMs = 4000;

  auto* format = app.add_subcommand("format", "Write a new header: every region is forgotten");
  format->add_option("path", path, "The pool")->required();
  format->add_option("--size", size, "Size of a new file pool (K, M, G; shared among striped files)")->capture_default_str();
  format->add_flag("--coherent", coherent,
                   "Ranks all run on this host: no cache-line flushes (default for files created "
                   "by the library itself; a device is formatted non-coherent)");
  auto* infoCmd = app.add_subcommand("info", "Print the header and the regions in use");
  infoCmd->add_option("path", path, "The pool")->required();
  auto* reclaim = app.add_subcommand("reclaim",
                                     "Free regions whose ranks are all gone or whose heartbeats "
                                     "stand still, and buffers whose process is gone (run it on "
                                     "the host that made them)");
  reclaim->add_option("path", path, "The pool")->required();
  reclaim->add_option("--wait-ms", waitMs, "How long a heartbeat must stand still")->capture_default_str();
  app.footer(  // after the subcommands, which would otherwise inherit it
      "Examples:\n"
      "  cxlccl-pool format /dev/dax0.0              # hosts sharing a CXL device\n"
      "  cxlccl-pool format /dev/dax0.0,/dev/dax1.0  # striped over two devices\n"
      "  cxlccl-pool format /dev/shm/p --size 2G --coherent\n"
      "  cxlccl-pool info /dev/shm/cxlccl.pool\n"
      "  cxlccl-pool reclaim /dev/shm/cxlccl.pool    # free dead jobs' regions");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }

  if (format->parsed()) {
    std::uint64_t bytes = 0;
    if (!parseSize(size, &bytes)) {
      std::fprintf(stderr, "cxlccl-pool: --size %s: expected a size such as 1G\n", size.c_str());
      return 2;
    }
    Status status = Pool::format(path, bytes, PoolFormat{coherent});
    if (!status.ok()) return fail(status);
    std::printf("formatted %s (%s)\n", path.c_str(), coherent ? "coherent: one host" : "non-coherent: flushes");
    return 0;
  }
  // info only reads (a read-only pool is enough); neither creates a pool that is not there.
  std::shared_ptr<Pool> pool;
  Status status = Pool::openExisting(path, !infoCmd->parsed(), &pool);
  if (!status.ok()) return fail(status);
  if (infoCmd->parsed()) {
    std::printf("pool %s: %llu bytes, generation %llu, %s, %llu bytes free\n", path.c_str(), static_cast<unsigned long long>(pool->bytes()),
                static_cast<unsigned long long>(pool->generation()), pool->coherent() ? "coherent (one host)" : "non-coherent (flushes)",
                static_cast<unsigned long long>(pool->freeBytes()));
    const PoolMapping& mapping = pool->mapping();
    if (mapping.devices() > 1) {
      std::printf("striped over %d devices in %llu-byte stripes:", mapping.devices(),
                  static_cast<unsigned long long>(mapping.stripeBytes()));
      for (int d = 0; d < mapping.devices(); ++d) std::printf(" %d=%s", d, mapping.devicePath(d).c_str());
      std::printf("\n");
    }
    std::printf("%-34s %12s %12s %6s %8s  %s\n", "region", "offset", "bytes", "ranks", "creator", "rank states");
    for (const RegionInfo& region : pool->regions()) {
      std::string states = region.nranks == 0 ? "buffer (cxlcclMemAlloc)" : "";
      for (const RankSample& r : sampleRanks(*pool, region)) states += cat(stateName(r.state), " ");
      std::printf("%016llx%016llx %12llu %12llu %6u %8u  %s\n", static_cast<unsigned long long>(region.nonce.high),
                  static_cast<unsigned long long>(region.nonce.low), static_cast<unsigned long long>(region.offset),
                  static_cast<unsigned long long>(region.bytes), region.nranks, region.creatorPid, states.c_str());
    }
    return 0;
  }
  // reclaim
  std::vector<RegionInfo> regions = pool->regions();
  std::vector<std::vector<RankSample>> before;
  for (const RegionInfo& region : regions) before.push_back(sampleRanks(*pool, region));
  std::printf("watching %zu regions' heartbeats for %d ms...\n", regions.size(), waitMs);
  std::this_thread::sleep_for(std::chrono::milliseconds(waitMs));
  int freed = 0;
  for (std::size_t i = 0; i < regions.size(); ++i) {
    std::vector<RankSample> after = sampleRanks(*pool, regions[i]);
    // A buffer has no heartbeat: it is dead when its process is, as far as this host can tell.
    bool alive = regions[i].nranks == 0 && (kill(static_cast<pid_t>(regions[i].creatorPid), 0) == 0 || errno == EPERM);
    // (A rank whose call failed holds the region until it aborts: alive while it beats.)
    for (std::size_t r = 0; r < after.size() && r < before[i].size(); ++r) {
      const auto state = static_cast<RankState>(after[r].state);
      alive |= (state == RankState::active || state == RankState::failed) && after[r].heartbeat != before[i][r].heartbeat;
    }
    if (alive) continue;
    status = pool->release(regions[i]);
    if (!status.ok()) return fail(status);
    ++freed;
  }
  std::printf("freed %d of %zu regions\n", freed, regions.size());
  return 0;
}
