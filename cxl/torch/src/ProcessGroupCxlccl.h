// The torch.distributed process group "cxlccl": torch's collectives on libcxlccl.
//
// Calls run on the caller's thread and return completed work (with a completed future, as DDP's
// reducer needs): a call's data has crossed the pool when it returns. Tensors may be
// non-contiguous (a contiguous copy is sent or received, then copied back) and on the CPU or a
// CUDA device (libcxlccl's GPU path, on the default stream). Send/Recv match in order between
// two ranks; tags are not matched. Between _start_coalescing and _end_coalescing (what
// batch_isend_irecv does) Sends and Recvs run together as one libcxlccl group.
#pragma once

#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include <chrono>
#include <mutex>
#include <vector>

#include "Staged.h"
#include "cxlccl.h"

namespace cxlccl_torch {

class ProcessGroupCxlccl final : public c10d::ProcessGroup {
 public:
  // Rank 0 names a new communicator in the pool and passes its id to the others through
  // `store`. `timeout` becomes libcxlccl's call timeout unless CXLCCL_TIMEOUT_MS is set.
  ProcessGroupCxlccl(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size, std::chrono::milliseconds timeout);
  ~ProcessGroupCxlccl() override;

  const std::string getBackendName() const override { return "cxlccl"; }
  // Leaves the communicator (at interpreter exit); later calls fail with a clear error.
  void shutdown();

  c10::intrusive_ptr<c10d::Work> broadcast(std::vector<at::Tensor>& tensors, const c10d::BroadcastOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allreduce(std::vector<at::Tensor>& tensors, const c10d::AllreduceOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allreduce_coalesced(std::vector<at::Tensor>& tensors,
                                                     const c10d::AllreduceCoalescedOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce(std::vector<at::Tensor>& tensors, const c10d::ReduceOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allgather(std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
                                           const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> _allgather_base(at::Tensor& output, at::Tensor& input, const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allgather_coalesced(std::vector<std::vector<at::Tensor>>& outputLists, std::vector<at::Tensor>& inputs,
                                                     const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> gather(std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
                                        const c10d::GatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> scatter(std::vector<at::Tensor>& outputs, std::vector<std::vector<at::Tensor>>& inputs,
                                         const c10d::ScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce_scatter(std::vector<at::Tensor>& outputs, std::vector<std::vector<at::Tensor>>& inputs,
                                                const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> _reduce_scatter_base(at::Tensor& output, at::Tensor& input,
                                                      const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> alltoall_base(at::Tensor& output, at::Tensor& input, std::vector<int64_t>& outputSplits,
                                               std::vector<int64_t>& inputSplits, const c10d::AllToAllOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> alltoall(std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
                                          const c10d::AllToAllOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> send(std::vector<at::Tensor>& tensors, int dstRank, int tag) override;
  c10::intrusive_ptr<c10d::Work> recv(std::vector<at::Tensor>& tensors, int srcRank, int tag) override;
  c10::intrusive_ptr<c10d::Work> recvAnysource(std::vector<at::Tensor>& tensors, int tag) override;
  c10::intrusive_ptr<c10d::Work> barrier(const c10d::BarrierOptions& opts) override;
  void startCoalescing() override;
  void endCoalescing(std::vector<c10::intrusive_ptr<c10d::Work>>& reqs) override;

 private:
  // Throws a c10::Error naming `call` and libcxlccl's message when `result` is a failure.
  void check(cxlcclResult_t result, const char* call) const;
  cxlcclComm_t liveComm(const char* call) const;
  c10::intrusive_ptr<c10d::Work> allreduceOne(at::Tensor& tensor, const c10d::ReduceOp& op, const char* call);
  c10::intrusive_ptr<c10d::Work> pointToPoint(std::vector<at::Tensor>& tensors, int peer, bool isSend);
  // Sends sends[j] to rank j and receives recvs[j] from it, as one group (an all-to-all).
  void exchange(const std::vector<at::Tensor>& sends, std::vector<Staged>& recvs, const char* call);

  cxlcclComm_t comm_ = nullptr;
  mutable std::mutex mutex_;  // one call at a time on the communicator
  bool coalescing_ = false;
  std::vector<at::Tensor> pendingSends_;  // kept alive until a coalesced group ends
  std::vector<Staged> pendingRecvs_;      // copied back when it ends
};

}  // namespace cxlccl_torch
