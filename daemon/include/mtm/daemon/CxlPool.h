#pragma once
// A libcxlccl pool that mtmd owns (daemon.cxl_pool). Ranks of any local user map it through the
// devices mtmd passes them, so the devices can stay root-only, and every change to the pool's
// region table is made here: one writer per host (docs/cxlccl.md, "A pool owned by mtmd").
//
//   cxl-pool                                   -> "spec PATHS"; the devices' descriptors
//                                                 passed alongside (SCM_RIGHTS)
//   cxl-alloc NONCEHI NONCELO BYTES NRANKS     -> "region OFFSET BYTES GENERATION"
//   cxl-free NONCEHI NONCELO OFFSET GENERATION -> "freed ..." (root or the region's owner)
//
// Nonces are hex; NRANKS 0 is a buffer (cxlcclMemAlloc); a region is owned by the uid that
// allocated it.

#include <memory>
#include <string>
#include <vector>

#include "mtm/Result.h"
#include "mtm/daemon/ControlRequest.h"
#include "mtm/daemon/ControlSocket.h"

namespace cxlccl {
class Pool;
}

namespace mtm::daemon {

class CxlPoolService {
 public:
  // Maps the pool `spec` (devices, or files, comma-separated; formatted with cxlccl-pool format).
  // An empty spec is no pool: requests are answered with how to configure one.
  static Result<std::unique_ptr<CxlPoolService>> open(const std::string& spec);
  ~CxlPoolService();

  // A cxl-pool, cxl-alloc or cxl-free request (ControlRequest::cxl()).
  Reply handle(const ControlRequest& request, const Peer& peer, std::vector<int>* passFds);
  const std::string& spec() const { return spec_; }

 private:
  CxlPoolService() = default;
  std::string spec_;
  std::shared_ptr<cxlccl::Pool> pool_;
};

}  // namespace mtm::daemon
