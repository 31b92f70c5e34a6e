#include "Pool.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <ctime>

#include "CacheLines.h"
#include "DaemonClient.h"

namespace cxlccl {
namespace {

constexpr char kMagic[8] = {'C', 'X', 'L', 'C', 'C', 'L', 'P', 'L'};
constexpr char kStripeMagic[8] = {'C', 'X', 'L', 'C', 'C', 'L', 'S', 'T'};
constexpr std::uint32_t kMaxRegions = 4096;
constexpr std::size_t kTableOffset = 4096;

struct PoolHeader {
  char magic[8];
  std::uint32_t version;
  std::uint32_t flags;
  std::uint64_t bytes;
  std::uint64_t generation;
  std::uint64_t dataOffset;     // layout: the first allocatable byte
  std::uint32_t maxRegions;     // layout: entries in the region table
  std::uint32_t tableOffset;    // layout: where the table starts
  std::uint32_t stripeDevices;  // striped over this many devices (0 in pools from before: one)
  std::uint32_t pad;
  std::uint64_t stripeBytes;
};

// The first stripe of each device after the first says which device of which pool it is, so
// devices given in another order, or another pool's, are refused.
struct StripeLabel {
  char magic[8];
  std::uint64_t generation;
  std::uint32_t index;
  std::uint32_t devices;
};

struct RegionEntry {
  std::uint64_t nonceHigh;
  std::uint64_t nonceLow;
  std::uint64_t offset;
  std::uint64_t bytes;
  std::uint64_t generation;
  std::uint32_t state;
  std::uint32_t nranks;
  std::uint32_t creatorPid;
  std::uint32_t ownerUid;  // who may free it through mtmd (besides root)
  std::uint32_t pad[2];
};
static_assert(sizeof(RegionEntry) == 64);
static_assert(kTableOffset + kMaxRegions * sizeof(RegionEntry) <= kPoolAlign);
static_assert(sizeof(PoolHeader) <= kTableOffset);

std::uint64_t timeSeed() {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull + ts.tv_nsec;
}

PoolHeader* header(std::byte* base) { return reinterpret_cast<PoolHeader*>(base); }
RegionEntry* table(std::byte* base) { return reinterpret_cast<RegionEntry*>(base + kTableOffset); }
StripeLabel* label(const PoolMapping& m, int device) {
  return reinterpret_cast<StripeLabel*>(m.base() + static_cast<std::size_t>(device) * m.stripeBytes());
}

// Regions start after the header's 2 MiB, or after every device's first stripe when striped.
std::uint64_t dataOffsetOf(const PoolMapping& m) {
  return m.devices() == 1 ? kPoolAlign : static_cast<std::uint64_t>(m.devices()) * m.stripeBytes();
}

// Where regions may lie: from the data offset (which the mapping decides) to the header's size
// or the mapping's end, whichever is less -- the header may have changed since it was checked.
struct DataRange {
  std::uint64_t begin = 0, end = 0;
};
DataRange dataRange(const PoolMapping& m, const PoolHeader& h) {
  const std::uint64_t begin = dataOffsetOf(m), end = std::min<std::uint64_t>(h.bytes, m.bytes());
  return {begin, std::max(begin, end)};
}

// Why a ready entry does not fit the pool ("" when it does): its region must lie in the data
// part, 2 MiB-aligned, and serve at most kMaxRanks ranks.
std::string entryProblem(const RegionEntry& e, DataRange d) {
  if (e.offset < d.begin || e.offset >= d.end || e.offset % kPoolAlign != 0)
    return cat("offset = ", e.offset, " (expected a multiple of 2 MiB in ", d.begin, "..", d.end, ")");
  if (e.bytes == 0 || e.bytes > d.end - e.offset || e.bytes % kPoolAlign != 0)
    return cat("bytes = ", e.bytes, " (expected a multiple of 2 MiB, at most ", d.end - e.offset, " from its offset)");
  if (e.nranks > 64) return cat("nranks = ", e.nranks, " (expected 0..64)");
  return "";
}

bool ready(const RegionEntry& e) { return e.state == static_cast<std::uint32_t>(RegionState::ready); }

}  // namespace

Requester Requester::self() { return {static_cast<std::uint32_t>(getpid()), static_cast<std::uint32_t>(getuid())}; }

Status Pool::open(const std::string& path, std::uint64_t createBytes, std::shared_ptr<Pool>* out) {
  std::string socket = daemonSocketOf(path);
  if (!socket.empty()) return openFromDaemon(path, socket, out);
  return openMapped(path, createBytes, PoolOpenMode{}, out);
}

Status Pool::openExisting(const std::string& path, bool writable, std::shared_ptr<Pool>* out) {
  // mtmd's pool exists by definition; mtmd makes every change to its table.
  if (std::string socket = daemonSocketOf(path); !socket.empty()) return openFromDaemon(path, socket, out);
  return openMapped(path, 0, PoolOpenMode{false, writable}, out);
}

Status Pool::openMapped(const std::string& path, std::uint64_t createBytes, PoolOpenMode mode, std::shared_ptr<Pool>* out) {
  std::shared_ptr<Pool> pool(new Pool());
  pool->spec_ = path;
  bool created = false;
  CXLCCL_TRY(PoolMapping::open(path, createBytes, &pool->mapping_, &created, mode));
  Status status;
  if (created) status = pool->writeHeader(true, 0);  // a file made here: one host, coherent
  if (status.ok()) status = pool->checkHeader();
  if (status.ok()) status = pool->checkTable();
  pool->unlock();
  if (!status.ok()) return status;
  *out = std::move(pool);
  return Status::success();
}

Status Pool::openFromDaemon(const std::string& spec, const std::string& socket, std::shared_ptr<Pool>* out) {
  std::string body;
  std::vector<int> fds;
  CXLCCL_TRY(daemonRequest(socket, "cxl-pool", &body, &fds));
  std::string devices = body.rfind("spec ", 0) == 0 ? body.substr(5, body.find('\n') - 5) : "";
  std::shared_ptr<Pool> pool(new Pool());
  pool->spec_ = spec;
  pool->daemonSocket_ = socket;
  CXLCCL_TRY(PoolMapping::adopt(devices, fds, &pool->mapping_));
  CXLCCL_TRY(pool->checkHeader());
  CXLCCL_TRY(pool->checkTable());
  info("pool ", devices, " from mtmd at ", socket);
  *out = std::move(pool);
  return Status::success();
}

Status Pool::format(const std::string& path, std::uint64_t createBytes, PoolFormat format) {
  if (!daemonSocketOf(path).empty())
    return Status::error(cxlcclInvalidUsage,
                         "the pool mtmd owns is formatted on its devices, as "
                         "root: cxlccl-pool format DEVICE (mtmd's daemon.cxl_pool)");
  std::shared_ptr<Pool> pool(new Pool());
  pool->spec_ = path;
  bool created = false;
  CXLCCL_TRY(PoolMapping::open(path, createBytes, &pool->mapping_, &created));
  pool->refreshHeader();
  const PoolHeader* h = header(pool->base());
  std::uint64_t previous = std::memcmp(h->magic, kMagic, sizeof kMagic) == 0 ? h->generation : 0;
  Status status = pool->writeHeader(format.coherent, previous);
  pool->unlock();
  return status;
}

Status Pool::writeHeader(bool coherent, std::uint64_t previousGeneration) {
  const PoolMapping& m = *mapping_;
  if (m.bytes() < dataOffsetOf(m) + kPoolAlign)
    return Status::error(cxlcclInvalidUsage, "pool ", path(), " has ", m.bytes(),
                         " bytes; a pool "
                         "needs at least ",
                         dataOffsetOf(m) + kPoolAlign,
                         " (4 MiB, or 2 stripes per "
                         "device when striped)");
  PoolHeader* h = header(base());
  std::memset(base(), 0, kTableOffset + kMaxRegions * sizeof(RegionEntry));
  std::memcpy(h->magic, kMagic, sizeof kMagic);
  h->version = kPoolVersion;
  h->flags = coherent ? kPoolFlagCoherent : 0;
  h->bytes = m.bytes();
  h->generation = std::max(previousGeneration + 1, timeSeed());
  h->dataOffset = dataOffsetOf(m);
  h->maxRegions = kMaxRegions;
  h->tableOffset = kTableOffset;
  h->stripeDevices = static_cast<std::uint32_t>(m.devices());
  h->stripeBytes = m.stripeBytes();
  for (int device = 1; device < m.devices(); ++device) {
    StripeLabel* l = label(m, device);
    std::memcpy(l->magic, kStripeMagic, sizeof kStripeMagic);
    l->generation = h->generation;
    l->index = static_cast<std::uint32_t>(device);
    l->devices = static_cast<std::uint32_t>(m.devices());
    writeBackLines(l, sizeof *l);
  }
  publishHeader();
  return Status::success();
}

Status Pool::checkHeader() const {
  const PoolMapping& m = *mapping_;
  refreshHeader();
  const PoolHeader* h = header(base());
  const std::string& spec = path();
  if (std::memcmp(h->magic, kStripeMagic, sizeof kStripeMagic) == 0)
    return Status::error(cxlcclInvalidUsage, "pool ", spec, ": ", m.devicePath(0), " is device ",
                         reinterpret_cast<const StripeLabel*>(h)->index,
                         " of a striped pool, not "
                         "its first: give the devices in the order they were formatted in");
  if (std::memcmp(h->magic, kMagic, sizeof kMagic) != 0)
    return Status::error(cxlcclInvalidUsage, "pool ", spec,
                         " has no cxlccl header (format it: "
                         "cxlccl-pool format ",
                         spec, ")");
  if (h->version != kPoolVersion)
    return Status::error(cxlcclInvalidUsage, "pool ", spec, " has header version ", h->version, ", this library reads version ",
                         kPoolVersion, " (reformat it with this library's cxlccl-pool format)");
  std::uint32_t devices = std::max<std::uint32_t>(h->stripeDevices, 1);
  if (devices != static_cast<std::uint32_t>(m.devices()))
    return Status::error(cxlcclInvalidUsage, "pool ", spec, " was formatted striped over ", devices, " device(s), and ", m.devices(),
                         " given: give all of them, in "
                         "their order, separated by commas");
  for (int device = 1; device < m.devices(); ++device) {
    const StripeLabel* l = label(m, device);
    invalidateLines(l, sizeof *l);
    if (std::memcmp(l->magic, kStripeMagic, sizeof kStripeMagic) != 0 || l->generation != h->generation ||
        l->index != static_cast<std::uint32_t>(device))
      return Status::error(cxlcclInvalidUsage, "pool ", spec, ": ", m.devicePath(device), " is not device ", device,
                           " of the pool formatted on ", m.devicePath(0),
                           ": give the devices in the order they were formatted "
                           "in (cxlccl-pool info shows it), or reformat them together");
  }
  if (h->bytes > m.bytes() || h->bytes < h->dataOffset + kPoolAlign || h->bytes % kPoolAlign != 0 || h->maxRegions != kMaxRegions ||
      h->tableOffset != kTableOffset || h->dataOffset != dataOffsetOf(m) || (devices > 1 && h->stripeBytes != m.stripeBytes()))
    return Status::error(cxlcclInvalidUsage, "pool ", spec, " has a header whose layout (", h->bytes, " bytes, ", h->maxRegions,
                         " regions) does not fit its ", m.bytes(), " mapped bytes: reformat it (cxlccl-pool format)");
  return Status::success();
}

Status Pool::checkTable() const {
  const RegionEntry* entries = table(base());
  for (std::uint32_t i = 0; i < kMaxRegions; ++i) {
    if (!ready(entries[i])) continue;
    if (std::string problem = entryProblem(entries[i], dataRange(*mapping_, *header(base()))); !problem.empty())
      return Status::error(cxlcclInvalidUsage, "pool ", path(), ": region table entry ", i, ": ", problem,
                           ": the table is corrupt (cxlccl-pool format ", path(), " resets it; every region is lost)");
  }
  return Status::success();
}

Pool::~Pool() = default;

Status Pool::lock() const { return mapping_->lock(); }
void Pool::unlock() const { mapping_->unlock(); }

// The header and table are read and written by every host: always through the cache-line
// primitives, whatever the pool's flags say (they are rare and small).
void Pool::refreshHeader() const { invalidateLines(base(), kTableOffset + kMaxRegions * sizeof(RegionEntry)); }

void Pool::publishHeader() const { writeBackLines(base(), kTableOffset + kMaxRegions * sizeof(RegionEntry)); }

std::uint64_t Pool::generation() const { return header(base())->generation; }
bool Pool::coherent() const { return (header(base())->flags & kPoolFlagCoherent) != 0; }

Status Pool::allocate(const RegionNonce& nonce, std::uint64_t bytes, std::uint32_t nranks, RegionInfo* out, Requester who) {
  if (!daemonSocket_.empty()) {
    std::string body;
    CXLCCL_TRY(
        daemonRequest(daemonSocket_, cat("cxl-alloc ", std::hex, nonce.high, " ", nonce.low, std::dec, " ", bytes, " ", nranks), &body));
    unsigned long long offset = 0, size = 0, generation = 0;
    if (std::sscanf(body.c_str(), "region %llu %llu %llu", &offset, &size, &generation) != 3)
      return Status::error(cxlcclInternalError, "mtmd at ", daemonSocket_, " answered cxl-alloc with \"", body, "\"");
    *out = RegionInfo{nonce, offset, size, generation, nranks, who.pid, who.uid};
    return Status::success();
  }
  bytes = (bytes + kPoolAlign - 1) / kPoolAlign * kPoolAlign;
  CXLCCL_TRY(lock());
  refreshHeader();
  if (Status st = checkTable(); !st.ok()) {
    unlock();
    return st;
  }
  RegionEntry* entries = table(base());
  std::vector<std::pair<std::uint64_t, std::uint64_t>> used;  // offset, bytes
  RegionEntry* freeEntry = nullptr;
  for (std::uint32_t i = 0; i < kMaxRegions; ++i) {
    RegionEntry& e = entries[i];
    if (ready(e) && e.nonceHigh == nonce.high && e.nonceLow == nonce.low) {
      e.state = static_cast<std::uint32_t>(RegionState::free);  // a stale run of the same job
    }
    if (ready(e)) {
      used.emplace_back(e.offset, e.bytes);
    } else if (freeEntry == nullptr) {
      freeEntry = &e;
    }
  }
  std::sort(used.begin(), used.end());
  const DataRange d = dataRange(*mapping_, *header(base()));
  std::uint64_t offset = d.begin;
  std::uint64_t end = d.end;
  bool found = false;
  for (const auto& [usedOffset, usedBytes] : used) {
    if (usedOffset >= offset + bytes) {
      found = true;
      break;
    }
    offset = std::max(offset, usedOffset + usedBytes);
  }
  if (!found) found = offset + bytes <= end;
  Status status;
  if (freeEntry == nullptr) {
    status = Status::error(cxlcclSystemError, "pool ", path(), " has all ", kMaxRegions,
                           " regions in use (cxlccl-pool list; cxlccl-pool reclaim frees those "
                           "of dead jobs)");
  } else if (!found) {
    status = Status::error(cxlcclSystemError, "pool ", path(), " has no free ", bytes, " bytes for a communicator of ", nranks, " ranks (",
                           freeBytes(),
                           " free in total; cxlccl-pool reclaim frees dead jobs' regions, or use "
                           "a larger pool: CXLCCL_POOL_SIZE for a new file)");
  } else {
    freeEntry->nonceHigh = nonce.high;
    freeEntry->nonceLow = nonce.low;
    freeEntry->offset = offset;
    freeEntry->bytes = bytes;
    freeEntry->generation = header(base())->generation;
    freeEntry->nranks = nranks;
    freeEntry->creatorPid = who.pid;
    freeEntry->ownerUid = who.uid;
    freeEntry->state = static_cast<std::uint32_t>(RegionState::ready);
    *out = RegionInfo{nonce, offset, bytes, freeEntry->generation, nranks, who.pid, who.uid};
  }
  publishHeader();
  unlock();
  return status;
}

bool Pool::find(const RegionNonce& nonce, RegionInfo* out) const {
  refreshHeader();
  for (const RegionInfo& region : regions()) {
    if (region.nonce == nonce) {
      *out = region;
      return true;
    }
  }
  return false;
}

Status Pool::release(const RegionInfo& region) {
  if (!daemonSocket_.empty()) {
    std::string body;
    return daemonRequest(
        daemonSocket_,
        cat("cxl-free ", std::hex, region.nonce.high, " ", region.nonce.low, std::dec, " ", region.offset, " ", region.generation), &body);
  }
  CXLCCL_TRY(lock());
  refreshHeader();
  RegionEntry* entries = table(base());
  for (std::uint32_t i = 0; i < kMaxRegions; ++i) {
    RegionEntry& e = entries[i];
    if (ready(e) && e.nonceHigh == region.nonce.high && e.nonceLow == region.nonce.low && e.offset == region.offset &&
        e.generation == region.generation) {
      e.state = static_cast<std::uint32_t>(RegionState::free);
    }
  }
  publishHeader();
  unlock();
  return Status::success();
}

std::vector<RegionInfo> Pool::regions() const {
  std::vector<RegionInfo> out;
  const RegionEntry* entries = table(base());
  for (std::uint32_t i = 0; i < kMaxRegions; ++i) {
    const RegionEntry& e = entries[i];
    if (!ready(e)) continue;
    if (std::string problem = entryProblem(e, dataRange(*mapping_, *header(base()))); !problem.empty()) {
      warn("pool ", path(), ": region table entry ", i, " left out: ", problem);
      continue;
    }
    out.push_back(RegionInfo{{e.nonceHigh, e.nonceLow}, e.offset, e.bytes, e.generation, e.nranks, e.creatorPid, e.ownerUid});
  }
  return out;
}

std::uint64_t Pool::freeBytes() const {
  std::uint64_t used = 0;
  for (const RegionInfo& region : regions()) used += region.bytes;
  const DataRange d = dataRange(*mapping_, *header(base()));
  return used < d.end - d.begin ? d.end - d.begin - used : 0;
}

}  // namespace cxlccl
