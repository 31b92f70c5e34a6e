// The C API: argument checks, errors as cxlcclResult_t plus a per-thread message, groups.

#include <sys/random.h>

#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "Collectives.h"
#include "Comm.h"
#include "Engine.h"
#include "Gpu.h"
#include "Options.h"
#include "Pool.h"
#include "PoolBuffers.h"
#include "Reduce.h"
#include "Status.h"
#include "cxlccl.h"

struct cxlcclComm {
  std::unique_ptr<cxlccl::Comm> comm;
  std::unique_ptr<cxlccl::Operation> op;
  std::unique_ptr<cxlccl::GpuContext> gpu;    // made by the first call given a stream
  std::unique_ptr<cxlccl::DeltaState> delta;  // with delta publish on (Options::delta)
};

namespace cxlccl {
namespace {

thread_local std::string lastError;

struct GroupCall {
  cxlcclComm* comm;
  P2pCall call;
  cudaStream_t stream;
};
struct GroupState {
  int depth = 0;
  std::vector<GroupCall> calls;
  // GroupEnd's working lists, kept between groups (no allocation on a group's path).
  std::vector<GroupCall> running;
  std::vector<P2pCall> mine;
  std::vector<cudaStream_t> streams;
};
thread_local GroupState group;

cxlcclResult_t report(const Status& status) {
  if (!status.ok()) {
    lastError = status.message;
    warn(status.message);
  }
  return status.code;
}

// The error for the exception being handled (called in a catch block only).
Status currentException(const char* name) {
  try {
    throw;
  } catch (const std::bad_alloc&) {
    return Status::error(cxlcclSystemError, name, ": out of memory (a buffer or list of the library's own could not grow)");
  } catch (const std::exception& e) {
    return Status::error(cxlcclInternalError, name, ": ", e.what());
  } catch (...) {
    return Status::error(cxlcclInternalError, name, ": an exception of unknown type");
  }
}

// No exception crosses into a C caller. One that a call throws (std::bad_alloc from a buffer it
// grows, a thread it cannot start) ends the call with an error, and `comm`, read then (the
// communicator the call ran on, or null), is failed as any failed call fails it: CommAbort is the
// way out, and the peers' calls fail then.
template <typename Call>
cxlcclResult_t guarded(const char* name, cxlcclComm* const& comm, Call call) noexcept {
  try {
    return call();
  } catch (...) {
    try {
      Status status = currentException(name);
      if (comm != nullptr && comm->comm != nullptr) comm->comm->fail(status);
      return report(status);
    } catch (...) {
      return cxlcclSystemError;  // (no memory left for the message either: the peers time out)
    }
  }
}

Status usable(const cxlcclComm* comm) {
  if (comm == nullptr || comm->comm == nullptr) return Status::error(cxlcclInvalidArgument, "comm is NULL or already destroyed");
  cxlcclResult_t error = comm->comm->asyncError();
  if (error != cxlcclSuccess)
    return Status::error(error, "the communicator is in error (", comm->comm->asyncErrorMessage(), "): abort it with cxlcclCommAbort");
  return Status::success();
}

// A call given a stream: the GPU context (made once, with the region registered for DMA), and
// the stream's earlier work done, so inputs that kernels produced on it are there.
Status prepareGpu(cxlcclComm* comm, cudaStream_t stream) {
  if (comm->gpu == nullptr) {
    CXLCCL_TRY(GpuContext::create(&comm->gpu));
    const RegionView& view = comm->comm->view();
    comm->gpu->registerHost(view.at(0), view.bytes());
  }
  return comm->gpu->synchronize(stream);
}

// Whether any of the buffers is GPU memory.
Status anyOnDevice(const GpuContext& gpu, std::initializer_list<const void*> buffers, bool* device) {
  *device = false;
  for (const void* buffer : buffers) {
    bool here = false;
    if (buffer != nullptr) CXLCCL_TRY(gpu.onDevice(buffer, &here));
    *device = *device || here;
  }
  return Status::success();
}

bool reduces(Collective kind) { return kind == Collective::reduce || kind == Collective::allReduce || kind == Collective::reduceScatter; }

// A reduction on device buffers: the device buffers are copied to pinned host memory, reduced
// there by the usual code, and the result copied back.
Status runStagedReduction(cxlcclComm* comm, Collective kind, const CallArgs& args, cudaStream_t stream, bool needsRecv) {
  GpuContext& gpu = *comm->gpu;
  std::size_t n = static_cast<std::size_t>(comm->comm->nranks());
  std::size_t bytes = args.count * typeSize(args.type);
  std::size_t sendBytes = kind == Collective::reduceScatter ? bytes * n : bytes;
  CallArgs host = args;
  bool sendOnDevice = false, recvOnDevice = false;
  CXLCCL_TRY(gpu.onDevice(args.send, &sendOnDevice));
  if (needsRecv) CXLCCL_TRY(gpu.onDevice(args.recv, &recvOnDevice));
  if (sendOnDevice) {
    std::byte* staged = nullptr;
    CXLCCL_TRY(gpu.staging(0, sendBytes, &staged));
    CXLCCL_TRY(gpu.copy(staged, args.send, sendBytes, stream));
    host.send = staged;
  }
  if (recvOnDevice) {
    std::byte* staged = nullptr;
    CXLCCL_TRY(gpu.staging(1, bytes, &staged));
    host.recv = staged;
  }
  comm->op->setGpu(nullptr, nullptr);
  CXLCCL_TRY(runCollective(*comm->comm, *comm->op, kind, host));
  if (recvOnDevice) CXLCCL_TRY(gpu.copy(args.recv, host.recv, bytes, stream));
  return Status::success();
}

// Before anything moves: with a stream, whether the call's buffers are on the GPU (a stream
// without a usable GPU is refused here, like a bad argument, and the comm stays usable).
Status routeCall(cxlcclComm* comm, cudaStream_t stream, std::initializer_list<const void*> buffers, bool* device) {
  *device = false;
  if (stream == nullptr) return Status::success();
  CXLCCL_TRY(prepareGpu(comm, stream));
  return anyOnDevice(*comm->gpu, buffers, device);
}

Status runRouted(cxlcclComm* comm, Collective kind, const CallArgs& args, cudaStream_t stream, bool device, bool needsRecv) {
  if (device && reduces(kind)) return runStagedReduction(comm, kind, args, stream, needsRecv);
  comm->op->setGpu(device ? comm->gpu.get() : nullptr, stream);
  return runCollective(*comm->comm, *comm->op, kind, args, comm->delta.get());
}

// Runs one communicator's point-to-point calls (one, or a group's), through the GPU when a
// buffer is on one; copies use the first stream given.
// A lone Send (outside a group) copies even from a pool buffer: it returns once its data sits in
// the pool, not once the peer has read it, so two ranks may Send before they Recv.
Status runCalls(cxlcclComm* comm, const P2pCall* calls, const cudaStream_t* streams, std::size_t count, bool grouped) {
  cudaStream_t stream = nullptr;
  bool device = false;
  for (std::size_t i = 0; i < count; ++i) {
    bool here = false;
    const P2pCall& call = calls[i];
    CXLCCL_TRY(routeCall(comm, streams[i], {call.send ? call.sendBuffer : call.recvBuffer}, &here));
    device = device || here;
    if (stream == nullptr) stream = streams[i];
  }
  comm->op->setGpu(device ? comm->gpu.get() : nullptr, stream);
  comm->op->publishInPlace(grouped);
  Status status = runPointToPoint(*comm->comm, *comm->op, calls, count);
  comm->op->publishInPlace(true);
  if (!status.ok()) comm->comm->fail(status);
  return status;
}

Status checkType(cxlcclDataType_t type, const char* call) {
  if (typeSize(type) == 0)
    return Status::error(cxlcclInvalidArgument, call, ": datatype ", static_cast<int>(type), " is not a cxlcclDataType_t (0..",
                         cxlcclNumTypes - 1, ")");
  return Status::success();
}

Status checkOp(cxlcclRedOp_t op, const char* call) {
  if (op < 0 || op >= cxlcclNumOps)
    return Status::error(cxlcclInvalidArgument, call, ": reduction op ", static_cast<int>(op), " is not sum, prod, max or min");
  return Status::success();
}

Status checkRank(int rank, int nranks, const char* call, const char* what) {
  if (rank < 0 || rank >= nranks)
    return Status::error(cxlcclInvalidArgument, call, ": ", what, " ", rank, " is out of range 0..", nranks - 1);
  return Status::success();
}

Status checkCount(std::size_t count, std::size_t blocks, cxlcclDataType_t type, const char* call) {
  std::size_t total = 0;
  if (__builtin_mul_overflow(count, typeSize(type) * blocks, &total))
    return Status::error(cxlcclInvalidArgument, call, ": count ", count, " overflows a size");
  return Status::success();
}

Status checkBuffer(const void* buffer, std::size_t count, const char* call, const char* name) {
  if (buffer == nullptr && count > 0) return Status::error(cxlcclInvalidArgument, call, ": ", name, " is NULL");
  return Status::success();
}

struct Needs {
  bool send = true, recv = true;
};

// A collective's arguments, checked before anything moves; which buffers this rank uses.
Status checkCollective(const cxlcclComm* comm, Collective kind, const CallArgs& args, Needs* needs) {
  const char* name = collectiveName(kind);
  CXLCCL_TRY(usable(comm));
  CXLCCL_TRY(checkType(args.type, name));
  if (reduces(kind)) CXLCCL_TRY(checkOp(args.op, name));
  int n = comm->comm->nranks();
  bool rooted = kind == Collective::broadcast || kind == Collective::gather || kind == Collective::scatter || kind == Collective::reduce;
  if (rooted) CXLCCL_TRY(checkRank(args.root, n, name, "root"));
  bool perRank = kind == Collective::allGather || kind == Collective::gather || kind == Collective::scatter ||
                 kind == Collective::reduceScatter || kind == Collective::allToAll;
  CXLCCL_TRY(checkCount(args.count, perRank ? static_cast<std::size_t>(n) : 1, args.type, name));
  bool root = comm->comm->rank() == args.root;
  needs->send = kind != Collective::broadcast && kind != Collective::scatter ? true : root;
  needs->recv = kind == Collective::gather || kind == Collective::reduce ? root : true;
  if (needs->send) CXLCCL_TRY(checkBuffer(args.send, args.count, name, "sendbuff"));
  if (needs->recv) CXLCCL_TRY(checkBuffer(args.recv, args.count, name, "recvbuff"));
  return Status::success();
}

cxlcclResult_t runCollective(cxlcclComm* comm, Collective kind, const CallArgs& args, cudaStream_t stream) {
  Needs needs;
  bool device = false;
  if (Status status = checkCollective(comm, kind, args, &needs); !status.ok()) return report(status);
  if (Status status = routeCall(comm, stream, {needs.send ? args.send : nullptr, needs.recv ? args.recv : nullptr}, &device); !status.ok())
    return report(status);
  Status status = runRouted(comm, kind, args, stream, device, needs.recv);
  if (!status.ok()) comm->comm->fail(status);
  return report(status);
}

cxlcclResult_t collective(cxlcclComm* comm, Collective kind, const CallArgs& args, cudaStream_t stream) {
  return guarded(collectiveName(kind), comm, [&] { return runCollective(comm, kind, args, stream); });
}

Status checkPointToPoint(const cxlcclComm* comm, bool send, const void* buffer, std::size_t count, cxlcclDataType_t type, int peer) {
  const char* name = send ? "Send" : "Recv";
  CXLCCL_TRY(usable(comm));
  CXLCCL_TRY(checkType(type, name));
  CXLCCL_TRY(checkRank(peer, comm->comm->nranks(), name, "peer"));
  CXLCCL_TRY(checkCount(count, 1, type, name));
  return checkBuffer(buffer, count, name, send ? "sendbuff" : "recvbuff");
}

cxlcclResult_t runPointToPoint(cxlcclComm* comm, bool send, const void* sendBuffer, void* recvBuffer, std::size_t count,
                               cxlcclDataType_t type, int peer, cudaStream_t stream) {
  if (Status status = checkPointToPoint(comm, send, send ? sendBuffer : recvBuffer, count, type, peer); !status.ok()) return report(status);
  P2pCall call{send, sendBuffer, recvBuffer, count * typeSize(type), peer};
  if (group.depth > 0) {
    group.calls.push_back({comm, call, stream});
    return cxlcclSuccess;
  }
  return report(runCalls(comm, &call, &stream, 1, false));
}

cxlcclResult_t pointToPoint(cxlcclComm* comm, bool send, const void* sendBuffer, void* recvBuffer, std::size_t count, cxlcclDataType_t type,
                            int peer, cudaStream_t stream) {
  // (In a group, nothing runs yet: a list that cannot grow leaves the communicator as it was.)
  return guarded(send ? "Send" : "Recv", group.depth > 0 ? nullptr : comm,
                 [&] { return runPointToPoint(comm, send, sendBuffer, recvBuffer, count, type, peer, stream); });
}

Status randomNonce(RegionNonce* nonce) {
  std::uint64_t words[2];
  if (getrandom(words, sizeof words, 0) != sizeof words) return Status::system("getrandom for a unique id", errno);
  *nonce = {words[0], words[1] | 1};
  return Status::success();
}

std::uint64_t fnv1a(const std::string& text, std::uint64_t seed) {
  std::uint64_t h = 0xcbf29ce484222325ull ^ seed;
  for (unsigned char c : text) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

Status makeId(const std::string& path, const RegionNonce& nonce, std::uint64_t generation, UniqueIdData* id) {
  if (path.size() >= sizeof id->poolPath)
    return Status::error(cxlcclInvalidArgument, "pool path ", path, " is longer than ", sizeof id->poolPath - 1, " bytes");
  std::memset(id, 0, sizeof *id);
  id->magic = kUniqueIdMagic;
  id->nonceHigh = nonce.high;
  id->nonceLow = nonce.low;
  id->poolGeneration = generation;
  std::memcpy(id->poolPath, path.data(), path.size());
  return Status::success();
}

cxlcclResult_t runInitComm(cxlcclComm_t* out, int nranks, const UniqueIdData& id, int rank, const cxlcclConfig_t* config) {
  if (out == nullptr) return report(Status::error(cxlcclInvalidArgument, "CommInitRank: comm is NULL"));
  *out = nullptr;
  Options options;
  Status status = resolveOptions(config, &options);
  std::unique_ptr<Comm> comm;
  if (status.ok()) status = Comm::init(nranks, rank, id, options, &comm);
  if (!status.ok()) return report(status);
  auto* handle = new cxlcclComm{std::move(comm), nullptr, nullptr, nullptr};
  try {
    handle->op = std::make_unique<Operation>(*handle->comm);
    if (Status agreed = DirectReads::agree(*handle->comm, *handle->op, options.direct, &handle->comm->direct()); !agreed.ok()) {
      cxlcclCommAbort(handle);  // (the peers learn of it and fail as well)
      return report(agreed);
    }
    if (options.delta != DeltaMode::off) handle->delta = std::make_unique<DeltaState>(*handle->comm, options.delta);
  } catch (...) {
    cxlcclCommAbort(handle);
    throw;
  }
  *out = handle;
  return cxlcclSuccess;
}

// CommDestroy (leaving after the peers have read what this rank published) or CommAbort.
cxlcclResult_t leave(cxlcclComm* comm, bool abort) {
  if (comm == nullptr) return report(Status::error(cxlcclInvalidArgument, abort ? "CommAbort" : "CommDestroy", ": comm is NULL"));
  Status status = abort ? comm->comm->abort() : comm->comm->destroy();
  comm->delta.reset();  // its mirrors: no peer reads them any more
  comm->op.reset();
  comm->gpu.reset();
  delete comm;
  return report(status);
}

cxlcclResult_t getUniqueId(cxlcclUniqueId* uniqueId) {
  if (uniqueId == nullptr) return report(Status::error(cxlcclInvalidArgument, "GetUniqueId: uniqueId is NULL"));
  std::string path = poolPath();
  std::uint64_t createBytes = 0;
  Status status = poolCreateBytes(&createBytes);
  std::shared_ptr<Pool> pool;
  if (status.ok()) status = Pool::open(path, createBytes, &pool);
  RegionNonce nonce;
  if (status.ok()) status = randomNonce(&nonce);
  UniqueIdData id;
  if (status.ok()) status = makeId(path, nonce, pool->generation(), &id);
  if (!status.ok()) return report(status);
  std::memcpy(uniqueId->internal, &id, sizeof id);
  return cxlcclSuccess;
}

cxlcclResult_t initComm(cxlcclComm_t* out, int nranks, const UniqueIdData& id, int rank, const cxlcclConfig_t* config) {
  return guarded("CommInitRank", nullptr, [&] { return runInitComm(out, nranks, id, rank, config); });
}

cxlcclResult_t initFromEnv(cxlcclComm_t* comm, const cxlcclConfig_t* config) {
  EnvRanks ranks;
  Status status = ranksFromEnv(&ranks);
  UniqueIdData id;
  if (status.ok()) {
    RegionNonce nonce{fnv1a(ranks.jobId, 0), fnv1a(ranks.jobId, 0x5bd1e995) | 1};
    status = makeId(poolPath(), nonce, 0, &id);
  }
  if (!status.ok()) return report(status);
  info("rank ", ranks.rank, " of ", ranks.nranks, " from ", ranks.source, ", job ", ranks.jobId);
  return initComm(comm, ranks.nranks, id, ranks.rank, config);
}

// GroupEnd: the calls made since the outermost GroupStart, one run per communicator.
cxlcclResult_t endGroup(cxlcclComm** running) {
  if (group.depth == 0) return report(Status::error(cxlcclInvalidUsage, "GroupEnd without GroupStart"));
  if (--group.depth > 0) return cxlcclSuccess;
  std::vector<GroupCall>& calls = group.running;
  calls.swap(group.calls);  // (group.calls takes `running`'s emptied list and its capacity)
  Status first = Status::success();
  // One run per communicator, its calls in the order they were made (a run's calls are taken
  // out of the list: comm set to null).
  for (std::size_t i = 0; i < calls.size(); ++i) {
    cxlcclComm* comm = calls[i].comm;
    if (comm == nullptr) continue;
    group.mine.clear();
    group.streams.clear();
    for (std::size_t j = i; j < calls.size(); ++j) {
      if (calls[j].comm != comm) continue;
      group.mine.push_back(calls[j].call);
      group.streams.push_back(calls[j].stream);
      calls[j].comm = nullptr;
    }
    // (No Status assigned on the way: each assignment of one costs a string's move.)
    auto runMine = [&] {
      CXLCCL_TRY(usable(comm));
      return runCalls(comm, group.mine.data(), group.streams.data(), group.mine.size(), true);
    };
    *running = comm;
    if (Status status = runMine(); !status.ok() && first.ok()) first = std::move(status);
  }
  calls.clear();
  return report(first);
}

}  // namespace
}  // namespace cxlccl

using namespace cxlccl;

extern "C" {

cxlcclResult_t cxlcclGetVersion(int* version) {
  if (version == nullptr) return report(Status::error(cxlcclInvalidArgument, "GetVersion: version is NULL"));
  *version = CXLCCL_VERSION_CODE;
  return cxlcclSuccess;
}

const char* cxlcclGetErrorString(cxlcclResult_t result) {
  switch (result) {
    case cxlcclSuccess:
      return "no error";
    case cxlcclUnhandledCudaError:
      return "unhandled cuda error (run with CXLCCL_DEBUG=INFO for details)";
    case cxlcclSystemError:
      return "unhandled system error (run with CXLCCL_DEBUG=INFO for details)";
    case cxlcclInternalError:
      return "internal error - please report this issue";
    case cxlcclInvalidArgument:
      return "invalid argument (run with CXLCCL_DEBUG=INFO for details)";
    case cxlcclInvalidUsage:
      return "invalid usage (run with CXLCCL_DEBUG=INFO for details)";
    case cxlcclRemoteError:
      return "remote process exited, stalled or aborted";
    case cxlcclInProgress:
      return "operation in progress";
    default:
      return "unknown result code";
  }
}

const char* cxlcclGetLastError(cxlcclComm_t) { return lastError.c_str(); }

cxlcclResult_t cxlcclGetUniqueId(cxlcclUniqueId* uniqueId) {
  return guarded("GetUniqueId", nullptr, [&] { return getUniqueId(uniqueId); });
}

cxlcclResult_t cxlcclCommInitRank(cxlcclComm_t* comm, int nranks, cxlcclUniqueId commId, int rank) {
  return cxlcclCommInitRankConfig(comm, nranks, commId, rank, nullptr);
}

cxlcclResult_t cxlcclCommInitRankConfig(cxlcclComm_t* comm, int nranks, cxlcclUniqueId commId, int rank, const cxlcclConfig_t* config) {
  UniqueIdData id;
  std::memcpy(&id, commId.internal, sizeof id);
  return initComm(comm, nranks, id, rank, config);
}

cxlcclResult_t cxlcclCommInitEnv(cxlcclComm_t* comm, const cxlcclConfig_t* config) {
  return guarded("CommInitEnv", nullptr, [&] { return initFromEnv(comm, config); });
}

cxlcclResult_t cxlcclCommGetAsyncError(cxlcclComm_t comm, cxlcclResult_t* asyncError) {
  if (comm == nullptr || asyncError == nullptr)
    return report(Status::error(cxlcclInvalidArgument, "CommGetAsyncError: comm or asyncError is NULL"));
  *asyncError = comm->comm->asyncError();
  return cxlcclSuccess;
}

cxlcclResult_t cxlcclCommDestroy(cxlcclComm_t comm) {
  return guarded("CommDestroy", nullptr, [&] { return leave(comm, false); });
}

cxlcclResult_t cxlcclCommAbort(cxlcclComm_t comm) {
  return guarded("CommAbort", nullptr, [&] { return leave(comm, true); });
}

cxlcclResult_t cxlcclMemAlloc(void** ptr, size_t size) {
  return guarded("MemAlloc", nullptr, [&] { return report(poolBufferAlloc(size, ptr)); });
}

cxlcclResult_t cxlcclMemFree(void* ptr) {
  return guarded("MemFree", nullptr, [&] { return report(poolBufferFree(ptr)); });
}

cxlcclResult_t cxlcclCommCount(const cxlcclComm_t comm, int* count) {
  if (comm == nullptr || count == nullptr) return report(Status::error(cxlcclInvalidArgument, "CommCount: comm or count is NULL"));
  *count = comm->comm->nranks();
  return cxlcclSuccess;
}

cxlcclResult_t cxlcclCommUserRank(const cxlcclComm_t comm, int* rank) {
  if (comm == nullptr || rank == nullptr) return report(Status::error(cxlcclInvalidArgument, "CommUserRank: comm or rank is NULL"));
  *rank = comm->comm->rank();
  return cxlcclSuccess;
}

cxlcclResult_t cxlcclCommCoherence(const cxlcclComm_t comm, int* mode) {
  if (comm == nullptr || mode == nullptr) return report(Status::error(cxlcclInvalidArgument, "CommCoherence: comm or mode is NULL"));
  switch (comm->comm->view().mode()) {
    case Coherence::hardware:
      *mode = cxlcclCoherenceHardware;
      break;
    case Coherence::flush:
      *mode = cxlcclCoherenceFlush;
      break;
    case Coherence::simulate:
      *mode = cxlcclCoherenceSimulate;
      break;
  }
  return cxlcclSuccess;
}

cxlcclResult_t cxlcclCommStats(const cxlcclComm_t comm, cxlcclCommStats_t* stats) {
  if (comm == nullptr || comm->comm == nullptr || stats == nullptr)
    return report(Status::error(cxlcclInvalidArgument, "CommStats: comm or stats is NULL"));
  const PoolTraffic& traffic = comm->comm->traffic();
  DeltaCounters d;
  if (comm->delta != nullptr) d = comm->delta->counters();
  *stats = cxlcclCommStats_t{traffic.written, traffic.read,  d.calls,     d.linePublishes, d.fullPublishes, d.ringPublishes,
                             d.lineApplies,   d.fullApplies, d.fallbacks, d.linesCompared, d.linesChanged};
  return cxlcclSuccess;
}

cxlcclResult_t cxlcclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount, cxlcclDataType_t datatype, cxlcclComm_t comm,
                               cudaStream_t stream) {
  return collective(comm, Collective::allGather, {sendbuff, recvbuff, sendcount, datatype, cxlcclSum, 0}, stream);
}

cxlcclResult_t cxlcclBroadcast(const void* sendbuff, void* recvbuff, size_t count, cxlcclDataType_t datatype, int root, cxlcclComm_t comm,
                               cudaStream_t stream) {
  return collective(comm, Collective::broadcast, {sendbuff, recvbuff, count, datatype, cxlcclSum, root}, stream);
}

cxlcclResult_t cxlcclGather(const void* sendbuff, void* recvbuff, size_t sendcount, cxlcclDataType_t datatype, int root, cxlcclComm_t comm,
                            cudaStream_t stream) {
  return collective(comm, Collective::gather, {sendbuff, recvbuff, sendcount, datatype, cxlcclSum, root}, stream);
}

cxlcclResult_t cxlcclScatter(const void* sendbuff, void* recvbuff, size_t recvcount, cxlcclDataType_t datatype, int root, cxlcclComm_t comm,
                             cudaStream_t stream) {
  return collective(comm, Collective::scatter, {sendbuff, recvbuff, recvcount, datatype, cxlcclSum, root}, stream);
}

cxlcclResult_t cxlcclReduce(const void* sendbuff, void* recvbuff, size_t count, cxlcclDataType_t datatype, cxlcclRedOp_t op, int root,
                            cxlcclComm_t comm, cudaStream_t stream) {
  return collective(comm, Collective::reduce, {sendbuff, recvbuff, count, datatype, op, root}, stream);
}

cxlcclResult_t cxlcclAllReduce(const void* sendbuff, void* recvbuff, size_t count, cxlcclDataType_t datatype, cxlcclRedOp_t op,
                               cxlcclComm_t comm, cudaStream_t stream) {
  return collective(comm, Collective::allReduce, {sendbuff, recvbuff, count, datatype, op, 0}, stream);
}

cxlcclResult_t cxlcclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount, cxlcclDataType_t datatype, cxlcclRedOp_t op,
                                   cxlcclComm_t comm, cudaStream_t stream) {
  return collective(comm, Collective::reduceScatter, {sendbuff, recvbuff, recvcount, datatype, op, 0}, stream);
}

cxlcclResult_t cxlcclAllToAll(const void* sendbuff, void* recvbuff, size_t count, cxlcclDataType_t datatype, cxlcclComm_t comm,
                              cudaStream_t stream) {
  return collective(comm, Collective::allToAll, {sendbuff, recvbuff, count, datatype, cxlcclSum, 0}, stream);
}

cxlcclResult_t cxlcclSend(const void* sendbuff, size_t count, cxlcclDataType_t datatype, int peer, cxlcclComm_t comm, cudaStream_t stream) {
  return pointToPoint(comm, true, sendbuff, nullptr, count, datatype, peer, stream);
}

cxlcclResult_t cxlcclRecv(void* recvbuff, size_t count, cxlcclDataType_t datatype, int peer, cxlcclComm_t comm, cudaStream_t stream) {
  return pointToPoint(comm, false, nullptr, recvbuff, count, datatype, peer, stream);
}

cxlcclResult_t cxlcclGroupStart(void) {
  ++group.depth;
  return cxlcclSuccess;
}

cxlcclResult_t cxlcclGroupEnd(void) {
  cxlcclComm* running = nullptr;  // the communicator whose calls run: failed where they throw
  cxlcclResult_t result = guarded("GroupEnd", running, [&] { return endGroup(&running); });
  group.running.clear();  // (left full where a call threw)
  return result;
}

}  // extern "C"
