#include "ProcessGroupCxlccl.h"

#include <c10/util/Exception.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <string>

#include "TensorTypes.h"

namespace cxlccl_torch {

namespace {

constexpr const char* kUniqueIdKey = "cxlccl_unique_id";
constexpr const char* kFailurePrefix = "failed:";

// Work that is done when it is made: the call ran on the caller's thread.
class DoneWork final : public c10d::Work {
 public:
  DoneWork(c10d::OpType type, std::vector<at::Tensor> outputs)
      : c10d::Work(-1, type), outputs_(std::move(outputs)), future_(c10::make_intrusive<c10::ivalue::Future>(c10::ListType::ofTensors())) {
    future_->markCompleted(c10::IValue(outputs_));
    finish();
  }
  std::vector<at::Tensor> result() override { return outputs_; }
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override { return future_; }

 private:
  std::vector<at::Tensor> outputs_;
  c10::intrusive_ptr<c10::ivalue::Future> future_;
};

c10::intrusive_ptr<c10d::Work> done(c10d::OpType type, std::vector<at::Tensor> outputs) {
  return c10::make_intrusive<DoneWork>(type, std::move(outputs));
}

at::Tensor& single(std::vector<at::Tensor>& tensors, const char* call) {
  TORCH_CHECK(tensors.size() == 1, "cxlccl ", call, ": takes one tensor per process, got ", tensors.size());
  checkMovable(tensors[0], call);
  return tensors[0];
}

void checkSameShape(const at::Tensor& t, const at::Tensor& like, const char* call, const char* what) {
  TORCH_CHECK(t.numel() == like.numel() && t.scalar_type() == like.scalar_type(), "cxlccl ", call, ": every ", what,
              " tensor must have the input's ", like.numel(), " elements of ", like.scalar_type(), ", got ", t.numel(), " of ",
              t.scalar_type());
  checkMovable(t, call);
}

void checkList(const std::vector<at::Tensor>& list, std::size_t size, const at::Tensor& like, const char* call, const char* what) {
  TORCH_CHECK(list.size() == size, "cxlccl ", call, ": expected ", size, " ", what, " tensors (one per rank), got ", list.size());
  for (const at::Tensor& t : list) checkSameShape(t, like, call, what);
}

void checkRoot(int64_t root, int size, const char* call) {
  TORCH_CHECK(root >= 0 && root < size, "cxlccl ", call, ": root rank ", root, " is not in the group of ", size);
}

// Collectives move bytes; only reductions need the element type.
cxlcclDataType_t bytesType() { return cxlcclUint8; }

int timeoutMsFor(std::chrono::milliseconds timeout) { return static_cast<int>(std::clamp<int64_t>(timeout.count(), 1, INT_MAX)); }

}  // namespace

ProcessGroupCxlccl::ProcessGroupCxlccl(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size, std::chrono::milliseconds timeout)
    : c10d::ProcessGroup(rank, size) {
  cxlcclUniqueId id{};
  if (rank == 0) {
    cxlcclResult_t result = cxlcclGetUniqueId(&id);
    if (result != cxlcclSuccess) {
      // The others wait on the store: tell them rather than let them wait out its timeout.
      std::string why = std::string(kFailurePrefix) + cxlcclGetLastError(nullptr);
      store->set(kUniqueIdKey, std::vector<uint8_t>(why.begin(), why.end()));
      TORCH_CHECK(false, "cxlccl: cannot name a communicator in the pool: ", cxlcclGetLastError(nullptr));
    }
    store->set(kUniqueIdKey, std::vector<uint8_t>(id.internal, id.internal + sizeof(id.internal)));
  } else {
    std::vector<uint8_t> bytes = store->get(kUniqueIdKey);
    std::string text(bytes.begin(), bytes.end());
    TORCH_CHECK(text.rfind(kFailurePrefix, 0) != 0,
                "cxlccl: rank 0 could not name a communicator in the pool: ", text.substr(std::char_traits<char>::length(kFailurePrefix)));
    TORCH_CHECK(bytes.size() == sizeof(id.internal), "cxlccl: the unique id in the store has ", bytes.size(), " bytes, not ",
                sizeof(id.internal), " (another program's key?)");
    std::copy(bytes.begin(), bytes.end(), id.internal);
  }
  cxlcclConfig_t config = CXLCCL_CONFIG_INITIALIZER;
  if (std::getenv("CXLCCL_TIMEOUT_MS") == nullptr) config.timeoutMs = timeoutMsFor(timeout);
  cxlcclResult_t result = cxlcclCommInitRankConfig(&comm_, size, id, rank, &config);
  TORCH_CHECK(result == cxlcclSuccess, "cxlccl: rank ", rank, " of ", size, " cannot join the communicator: ", cxlcclGetLastError(nullptr));
}

ProcessGroupCxlccl::~ProcessGroupCxlccl() { shutdown(); }

void ProcessGroupCxlccl::shutdown() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (comm_ == nullptr) return;
  cxlcclResult_t asyncError = cxlcclSuccess;
  // A communicator in error cannot wait for its peers: leave at once.
  if (cxlcclCommGetAsyncError(comm_, &asyncError) != cxlcclSuccess || asyncError != cxlcclSuccess)
    cxlcclCommAbort(comm_);
  else
    cxlcclCommDestroy(comm_);
  comm_ = nullptr;
}

void ProcessGroupCxlccl::check(cxlcclResult_t result, const char* call) const {
  TORCH_CHECK(result == cxlcclSuccess, "cxlccl ", call, " (rank ", getRank(), " of ", getSize(), "): ", cxlcclGetErrorString(result), ": ",
              cxlcclGetLastError(comm_));
}

cxlcclComm_t ProcessGroupCxlccl::liveComm(const char* call) const {
  TORCH_CHECK(comm_ != nullptr, "cxlccl ", call, ": the process group was shut down (at interpreter exit, or by destroy_process_group)");
  return comm_;
}

c10::intrusive_ptr<c10d::Work> ProcessGroupCxlccl::broadcast(std::vector<at::Tensor>& tensors, const c10d::BroadcastOptions& opts) {
  at::Tensor& tensor = single(tensors, "broadcast");
  checkRoot(opts.rootRank, getSize(), "broadcast");
  Staged staged(tensor);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    check(cxlcclBroadcast(staged.data(), staged.data(), staged.bytes(), bytesType(), static_cast<int>(opts.rootRank), liveComm("broadcast"),
                          nullptr),
          "broadcast");
  }
  staged.commit();
  return done(c10d::OpType::BROADCAST, tensors);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupCxlccl::allreduceOne(at::Tensor& tensor, const c10d::ReduceOp& op, const char* call) {
  Staged staged(tensor);
  Reduction r = reductionOf(staged.buffer(), op, call);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    check(cxlcclAllReduce(r.tensor.data_ptr(), r.tensor.data_ptr(), static_cast<size_t>(r.tensor.numel()), r.type, r.op, liveComm(call),
                          nullptr),
          call);
  }
  finishReduction(r, staged.buffer(), getSize());
  staged.commit();
  return done(c10d::OpType::ALLREDUCE, {tensor});
}

c10::intrusive_ptr<c10d::Work> ProcessGroupCxlccl::allreduce(std::vector<at::Tensor>& tensors, const c10d::AllreduceOptions& opts) {
  allreduceOne(single(tensors, "allreduce"), opts.reduceOp, "allreduce");
  return done(c10d::OpType::ALLREDUCE, tensors);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupCxlccl::allreduce_coalesced(std::vector<at::Tensor>& tensors,
                                                                       const c10d::AllreduceCoalescedOptions& opts) {
  TORCH_CHECK(!tensors.empty(), "cxlccl allreduce_coalesced: no tensors");
  for (const at::Tensor& t : tensors) {
    checkMovable(t, "allreduce_coalesced");
    TORCH_CHECK(t.scalar_type() == tensors[0].scalar_type(), "cxlccl allreduce_coalesced: tensors must share one dtype, got ",
                tensors[0].scalar_type(), " and ", t.scalar_type());
  }
  at::Tensor flat = flatten(tensors);
  allreduceOne(flat, opts.reduceOp, "allreduce_coalesced");
  unflatten(flat, tensors);
  return done(c10d::OpType::ALLREDUCE_COALESCED, tensors);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupCxlccl::reduce(std::vector<at::Tensor>& tensors, const c10d::ReduceOptions& opts) {
  at::Tensor& tensor = single(tensors, "reduce");
  checkRoot(opts.rootRank, getSize(), "reduce");
  Staged staged(tensor);
  Reduction r = reductionOf(staged.buffer(), opts.reduceOp, "reduce");
  {
    std::lock_guard<std::mutex> lock(mutex_);
    check(cxlcclReduce(r.tensor.data_ptr(), r.tensor.data_ptr(), static_cast<size_t>(r.tensor.numel()), r.type, r.op,
                       static_cast<int>(opts.rootRank), liveComm("reduce"), nullptr),
          "reduce");
  }
  if (getRank() == opts.rootRank) {
    finishReduction(r, staged.buffer(), getSize());
    staged.commit();
  }
  return done(c10d::OpType::REDUCE, tensors);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupCxlccl::_allgather_base(at::Tensor& output, at::Tensor& input, const c10d::AllgatherOptions&) {
  checkMovable(input, "_allgather_base");
  checkMovable(output, "_allgather_base");
  TORCH_CHECK(output.numel() == input.numel() * getSize() && output.scalar_type() == input.scalar_type(),
              "cxlccl _allgather_base: the output must have ", getSize(), " times the input's ", input.numel(), " elements of ",
              input.scalar_type(), ", got ", output.numel(), " of ", output.scalar_type());
  at::Tensor in = input.contiguous();
  Staged out(output);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    check(cxlcclAllGather(in.data_ptr(), out.data(), in.nbytes(), bytesType(), liveComm("_allgather_base"), nullptr), "_allgather_base");
  }
  out.commit();
  return done(c10d::OpType::_ALLGATHER_BASE, {output});
}

c10::intrusive_ptr<c10d::Work> ProcessGroupCxlccl::allgather(std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
                                                             const c10d::AllgatherOptions& opts) {
  at::Tensor& input = single(inputs, "allgather");
  TORCH_CHECK(outputs.size() == 1, "cxlccl allgather: takes one output list per process, got ", outputs.size());
  checkList(outputs[0], static_cast<std::size_t>(getSize()), input, "allgather", "output");
  at::Tensor flat = emptyTimes(input, getSize());
  _allgather_base(flat, input, opts);
  unflatten(flat, outputs[0]);
  return done(c10d::OpType::ALLGATHER, outputs[0]);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupCxlccl::allgather_coalesced(std::vector<std::vector<at::Tensor>>& outputLists,
                                                                       std::vector<at::Tensor>& inputs,
                                                                       const c10d::AllgatherOptions& opts) {
  TORCH_CHECK(outputLists.size() == static_cast<std::size_t>(getSize()), "cxlccl allgather_coalesced: expected ", getSize(),
              " output lists (one per rank), got ", outputLists.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    std::vector<std::vector<at::Tensor>> outputs(1);
    for (std::vector<at::Tensor>& list : outputLists) {
      TORCH_CHECK(list.size() == inputs.size(), "cxlccl allgather_coalesced: every output list must have one tensor per input (",
                  inputs.size(), "), got ", list.size());
      outputs[0].push_back(list[i]);
    }
    std::vector<at::Tensor> in{inputs[i]};
    allgather(outputs, in, opts);
  }
  return done(c10d::OpType::ALLGATHER_COALESCED, inputs);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupCxlccl::gather(std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
                                                          const c10d::GatherOptions& opts) {
  at::Tensor& input = single(inputs, "gather");
  checkRoot(opts.rootRank, getSize(), "gather");
  const bool root = getRank() == opts.rootRank;
  at::Tensor flat;
  if (root) {
    TORCH_CHECK(outputs.size() == 1, "cxlccl gather: the root takes one output list, got ", outputs.size());
    checkList(outputs[0], static_cast<std::size_t>(getSize()), input, "gather", "output");
    flat = emptyTimes(input, getSize());
  } else {
    TORCH_CHECK(outputs.empty(), "cxlccl gather: only the root (rank ", opts.rootRank, ") takes an output list");
  }
  at::Tensor in = input.contiguous();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    check(cxlcclGather(in.data_ptr(), root ? flat.data_ptr() : nullptr, in.nbytes(), bytesType(), static_cast<int>(opts.rootRank),
                       liveComm("gather"), nullptr),
          "gather");
  }
  if (root) unflatten(flat, outputs[0]);
  return done(c10d::OpType::GATHER, root ? outputs[0] : std::vector<at::Tensor>{});
}

c10::intrusive_ptr<c10d::Work> ProcessGroupCxlccl::scatter(std::vector<at::Tensor>& outputs, std::vector<std::vector<at::Tensor>>& inputs,
                                                           const c10d::ScatterOptions& opts) {
  at::Tensor& output = single(outputs, "scatter");
  checkRoot(opts.rootRank, getSize(), "scatter");
  const bool root = getRank() == opts.rootRank;
  at::Tensor flat;
  if (root) {
    TORCH_CHECK(inputs.size() == 1, "cxlccl scatter: the root takes one input list, got ", inputs.size());
    checkList(inputs[0], static_cast<std::size_t>(getSize()), output, "scatter", "input");
    flat = flatten(inputs[0]);
  } else {
    TORCH_CHECK(inputs.empty(), "cxlccl scatter: only the root (rank ", opts.rootRank, ") takes an input list");
  }
  Staged out(output);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    check(cxlcclScatter(root ? flat.data_ptr() : nullptr, out.data(), out.bytes(), bytesType(), static_cast<int>(opts.rootRank),
                        liveComm("scatter"), nullptr),
          "scatter");
  }
  out.commit();
  return done(c10d::OpType::SCATTER, outputs);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupCxlccl::_reduce_scatter_base(at::Tensor& output, at::Tensor& input,
                                                                        const c10d::ReduceScatterOptions& opts) {
  checkMovable(input, "reduce_scatter");
  checkMovable(output, "reduce_scatter");
  TORCH_CHECK(input.numel() == output.numel() * getSize() && output.scalar_type() == input.scalar_type(),
              "cxlccl reduce_scatter: the input must have ", getSize(), " times the output's ", output.numel(), " elements of ",
              output.scalar_type(), ", got ", input.numel(), " of ", input.scalar_type());
  Reduction in = reductionOf(input.contiguous(), opts.reduceOp, "reduce_scatter");
  Staged staged(output);
  Reduction out = reductionOf(staged.buffer(), opts.reduceOp, "reduce_scatter");
  {
    std::lock_guard<std::mutex> lock(mutex_);
    check(cxlcclReduceScatter(in.tensor.data_ptr(), out.tensor.data_ptr(), static_cast<size_t>(out.tensor.numel()), out.type, out.op,
                              liveComm("reduce_scatter"), nullptr),
          "reduce_scatter");
  }
  finishReduction(out, staged.buffer(), getSize());
  staged.commit();
  return done(c10d::OpType::_REDUCE_SCATTER_BASE, {output});
}

c10::intrusive_ptr<c10d::Work> ProcessGroupCxlccl::reduce_scatter(std::vector<at::Tensor>& outputs,
                                                                  std::vector<std::vector<at::Tensor>>& inputs,
                                                                  const c10d::ReduceScatterOptions& opts) {
  at::Tensor& output = single(outputs, "reduce_scatter");
  TORCH_CHECK(inputs.size() == 1, "cxlccl reduce_scatter: takes one input list per process, got ", inputs.size());
  checkList(inputs[0], static_cast<std::size_t>(getSize()), output, "reduce_scatter", "input");
  at::Tensor flat = flatten(inputs[0]);
  _reduce_scatter_base(output, flat, opts);
  return done(c10d::OpType::REDUCE_SCATTER, outputs);
}

void ProcessGroupCxlccl::exchange(const std::vector<at::Tensor>& sends, std::vector<Staged>& recvs, const char* call) {
  std::lock_guard<std::mutex> lock(mutex_);
  cxlcclComm_t comm = liveComm(call);
  check(cxlcclGroupStart(), call);
  cxlcclResult_t result = cxlcclSuccess;
  for (int peer = 0; peer < getSize() && result == cxlcclSuccess; ++peer) {
    const at::Tensor& send = sends[static_cast<std::size_t>(peer)];
    Staged& recv = recvs[static_cast<std::size_t>(peer)];
    if (send.nbytes() > 0) result = cxlcclSend(send.data_ptr(), send.nbytes(), bytesType(), peer, comm, nullptr);
    if (result == cxlcclSuccess && recv.bytes() > 0) result = cxlcclRecv(recv.data(), recv.bytes(), bytesType(), peer, comm, nullptr);
  }
  cxlcclResult_t ended = cxlcclGroupEnd();
  check(result != cxlcclSuccess ? result : ended, call);
  for (Staged& r : recvs) r.commit();
}

c10::intrusive_ptr<c10d::Work> ProcessGroupCxlccl::alltoall_base(at::Tensor& output, at::Tensor& input, std::vector<int64_t>& outputSplits,
                                                                 std::vector<int64_t>& inputSplits, const c10d::AllToAllOptions&) {
  checkMovable(input, "all_to_all_single");
  checkMovable(output, "all_to_all_single");
  TORCH_CHECK(input.scalar_type() == output.scalar_type(), "cxlccl all_to_all_single: input and output dtypes differ (",
              input.scalar_type(), ", ", output.scalar_type(), ")");
  const auto size = static_cast<std::size_t>(getSize());
  if (outputSplits.empty() && inputSplits.empty()) {
    TORCH_CHECK(input.numel() == output.numel() && input.numel() % getSize() == 0,
                "cxlccl all_to_all_single: input and output must have "
                "the same number of elements, a multiple of the group's ",
                getSize(), ", got ", input.numel(), " and ", output.numel());
    at::Tensor in = input.contiguous();
    Staged out(output);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      check(cxlcclAllToAll(in.data_ptr(), out.data(), in.nbytes() / size, bytesType(), liveComm("all_to_all_single"), nullptr),
            "all_to_all_single");
    }
    out.commit();
    return done(c10d::OpType::ALLTOALL_BASE, {output});
  }
  // Unequal splits (rows of dim 0): one Send and one Recv per peer, as a group.
  auto rows = [&](const at::Tensor& t, std::vector<int64_t>& splits, const char* which) {
    TORCH_CHECK(t.dim() > 0, "cxlccl all_to_all_single: split sizes need a tensor with a first dimension");
    if (splits.empty()) splits.assign(size, t.size(0) / getSize());
    TORCH_CHECK(splits.size() == size, "cxlccl all_to_all_single: ", which, "_split_sizes has ", splits.size(), " entries for a group of ",
                size);
    int64_t total = 0;
    for (int64_t s : splits) {
      TORCH_CHECK(s >= 0, "cxlccl all_to_all_single: negative split size ", s);
      total += s;
    }
    TORCH_CHECK(total == t.size(0), "cxlccl all_to_all_single: ", which, "_split_sizes add up to ", total, ", not the tensor's ", t.size(0),
                " rows");
  };
  rows(input, inputSplits, "input");
  rows(output, outputSplits, "output");
  at::Tensor in = input.contiguous();
  Staged out(output);
  std::vector<at::Tensor> sends;
  std::vector<Staged> recvs;
  for (std::size_t peer = 0, inRow = 0, outRow = 0; peer < size; ++peer) {
    sends.push_back(in.narrow(0, static_cast<int64_t>(inRow), inputSplits[peer]));
    recvs.emplace_back(out.buffer().narrow(0, static_cast<int64_t>(outRow), outputSplits[peer]));
    inRow += static_cast<std::size_t>(inputSplits[peer]);
    outRow += static_cast<std::size_t>(outputSplits[peer]);
  }
  exchange(sends, recvs, "all_to_all_single");
  out.commit();
  return done(c10d::OpType::ALLTOALL_BASE, {output});
}

c10::intrusive_ptr<c10d::Work> ProcessGroupCxlccl::alltoall(std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
                                                            const c10d::AllToAllOptions&) {
  const auto size = static_cast<std::size_t>(getSize());
  TORCH_CHECK(inputs.size() == size && outputs.size() == size, "cxlccl all_to_all: expected ", size, " input and output tensors, got ",
              inputs.size(), " and ", outputs.size());
  std::vector<at::Tensor> sends;
  std::vector<Staged> recvs;
  for (std::size_t peer = 0; peer < size; ++peer) {
    checkMovable(inputs[peer], "all_to_all");
    checkMovable(outputs[peer], "all_to_all");
    sends.push_back(inputs[peer].contiguous());
    recvs.emplace_back(outputs[peer]);
  }
  exchange(sends, recvs, "all_to_all");
  return done(c10d::OpType::ALLTOALL, outputs);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupCxlccl::pointToPoint(std::vector<at::Tensor>& tensors, int peer, bool isSend) {
  const char* call = isSend ? "send" : "recv";
  at::Tensor& tensor = single(tensors, call);
  TORCH_CHECK(peer >= 0 && peer < getSize(), "cxlccl ", call, ": rank ", peer, " is not in the group of ", getSize());
  std::lock_guard<std::mutex> lock(mutex_);
  cxlcclComm_t comm = liveComm(call);
  if (isSend) {
    at::Tensor data = tensor.contiguous();
    check(cxlcclSend(data.data_ptr(), data.nbytes(), bytesType(), peer, comm, nullptr), call);
    if (coalescing_) pendingSends_.push_back(data);
  } else {
    Staged staged(tensor);
    check(cxlcclRecv(staged.data(), staged.bytes(), bytesType(), peer, comm, nullptr), call);
    if (coalescing_)
      pendingRecvs_.push_back(staged);
    else
      staged.commit();
  }
  return done(isSend ? c10d::OpType::SEND : c10d::OpType::RECV, tensors);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupCxlccl::send(std::vector<at::Tensor>& tensors, int dstRank, int) {
  return pointToPoint(tensors, dstRank, true);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupCxlccl::recv(std::vector<at::Tensor>& tensors, int srcRank, int) {
  return pointToPoint(tensors, srcRank, false);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupCxlccl::recvAnysource(std::vector<at::Tensor>&, int) {
  TORCH_CHECK(false, "cxlccl recv: receiving from any source is not supported: pass src= (messages match in order between two ranks)");
}

c10::intrusive_ptr<c10d::Work> ProcessGroupCxlccl::barrier(const c10d::BarrierOptions&) {
  uint8_t token = 0;
  std::lock_guard<std::mutex> lock(mutex_);
  check(cxlcclAllReduce(&token, &token, 1, cxlcclUint8, cxlcclMax, liveComm("barrier"), nullptr), "barrier");
  return done(c10d::OpType::BARRIER, {});
}

void ProcessGroupCxlccl::startCoalescing() {
  std::lock_guard<std::mutex> lock(mutex_);
  TORCH_CHECK(!coalescing_, "cxlccl: _start_coalescing inside a coalesced group");
  check(cxlcclGroupStart(), "batch_isend_irecv");
  coalescing_ = true;
}

void ProcessGroupCxlccl::endCoalescing(std::vector<c10::intrusive_ptr<c10d::Work>>&) {
  std::lock_guard<std::mutex> lock(mutex_);
  TORCH_CHECK(coalescing_, "cxlccl: _end_coalescing without _start_coalescing");
  coalescing_ = false;
  cxlcclResult_t result = cxlcclGroupEnd();
  std::vector<Staged> recvs = std::move(pendingRecvs_);
  pendingRecvs_.clear();
  pendingSends_.clear();
  check(result, "batch_isend_irecv");
  for (Staged& r : recvs) r.commit();
}

}  // namespace cxlccl_torch
