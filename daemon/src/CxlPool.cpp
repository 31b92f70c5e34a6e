#include "mtm/daemon/CxlPool.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>

#include "DaemonClient.h"
#include "Pool.h"
#include "mtm/Log.h"

namespace mtm::daemon {

Result<std::unique_ptr<CxlPoolService>> CxlPoolService::open(const std::string& spec) {
  std::unique_ptr<CxlPoolService> service(new CxlPoolService());
  service->spec_ = spec;
  if (spec.empty()) return service;
  if (!cxlccl::daemonSocketOf(spec).empty())
    return Error("daemon.cxl_pool " + spec + ": mtmd's own pool is a device or file, not \"mtmd\"");
  // Nothing is created here: every device must exist and be formatted (cxlccl-pool format).
  for (std::size_t at = 0; at <= spec.size();) {
    std::size_t comma = std::min(spec.find(',', at), spec.size());
    std::string path = spec.substr(at, comma - at);
    struct stat st;
    if (::stat(path.c_str(), &st) != 0)
      return Error::fromErrno("daemon.cxl_pool: " + path + " (create and format it first: cxlccl-pool format " + path + " --size 1G)",
                              errno);
    at = comma + 1;
  }
  std::shared_ptr<cxlccl::Pool> pool;
  cxlccl::Status status = cxlccl::Pool::openExisting(spec, true, &pool);
  if (!status.ok()) return Error("daemon.cxl_pool " + spec + ": " + status.message);
  service->pool_ = std::move(pool);
  MTM_INFO("cxl pool {}: {} bytes, {} free, {} region(s) in use", spec, service->pool_->bytes(), service->pool_->freeBytes(),
           service->pool_->regions().size());
  return service;
}

CxlPoolService::~CxlPoolService() = default;

Reply CxlPoolService::handle(const ControlRequest& request, const Peer& peer, std::vector<int>* passFds) {
  if (pool_ == nullptr)
    return Error(
        "mtmd owns no CXL pool: set daemon.cxl_pool in its config to a formatted device "
        "(cxlccl-pool format /dev/daxX.Y) and restart it");
  const auto& v = request.numbers;
  if (request.verb == ControlRequest::Verb::CxlPool) {
    const cxlccl::PoolMapping& m = pool_->mapping();
    std::string paths;
    for (int d = 0; d < m.devices(); ++d) {
      paths += (d == 0 ? "" : ",") + m.devicePath(d);
      passFds->push_back(m.deviceFd(d));
    }
    MTM_DEBUG("cxl-pool: handed {} to uid={} pid={}", paths, peer.uid, peer.pid);
    return "spec " + paths + "\n";
  }
  if (request.verb == ControlRequest::Verb::CxlAlloc) {
    cxlccl::RegionInfo region;
    cxlccl::Status status = pool_->allocate({v[0], v[1]}, v[2], static_cast<std::uint32_t>(v[3]), &region,
                                            {static_cast<std::uint32_t>(peer.pid), static_cast<std::uint32_t>(peer.uid)});
    if (!status.ok()) return Error(status.message);
    MTM_INFO("cxl region {}+{} for {} ranks, uid={} pid={}", region.offset, region.bytes, region.nranks, peer.uid, peer.pid);
    return "region " + std::to_string(region.offset) + " " + std::to_string(region.bytes) + " " + std::to_string(region.generation) + "\n";
  }
  if (request.verb == ControlRequest::Verb::CxlFree) {
    for (const cxlccl::RegionInfo& region : pool_->regions()) {
      if (region.nonce.high != v[0] || region.nonce.low != v[1] || region.offset != v[2] || region.generation != v[3]) continue;
      if (peer.uid != 0 && region.ownerUid != peer.uid)
        return Error("permission denied: the region at " + std::to_string(region.offset) + " belongs to uid " +
                         std::to_string(region.ownerUid) + "; uid " + std::to_string(peer.uid) + " may only free its own (or run as root)",
                     EPERM);
      cxlccl::Status status = pool_->release(region);
      if (!status.ok()) return Error(status.message);
      MTM_INFO("cxl region {}+{} freed by uid={} pid={}", region.offset, region.bytes, peer.uid, peer.pid);
      return "freed region at " + std::to_string(region.offset) + "\n";
    }
    return std::string("no such region (already freed)\n");
  }
  return Error(std::string("not a cxl request (") + kCxlRequestUsage + ")");
}

}  // namespace mtm::daemon
