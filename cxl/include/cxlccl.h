/* libcxlccl: collectives across hosts that share a CXL memory pool, NCCL-shaped.
 *
 * Every rank maps the same pool (a device-DAX, or a file on hugetlbfs or /dev/shm); rank 0 of a
 * communicator allocates a region in it and the others find it there by the unique id. A rank
 * publishes data once into its own part of the region and every reader copies it out, with the
 * flushes and fences that memory without hardware coherence between hosts needs.
 *
 * Calls are blocking for host buffers. Every call returns a cxlcclResult_t; the text of the
 * last failure on the calling thread is cxlcclGetLastError(). A communicator that saw a peer die,
 * stall past its timeout or abort stays in error (cxlcclCommGetAsyncError) and should be
 * aborted. See docs/cxlccl.md. */
#ifndef CXLCCL_H_
#define CXLCCL_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CXLCCL_MAJOR 0
#define CXLCCL_MINOR 1
#define CXLCCL_PATCH 0
#define CXLCCL_VERSION_CODE (CXLCCL_MAJOR * 10000 + CXLCCL_MINOR * 100 + CXLCCL_PATCH)

/* The same type as CUDA's cudaStream_t, so callers that include cuda_runtime.h pass theirs. */
typedef struct CUstream_st* cudaStream_t;

typedef enum {
  cxlcclSuccess = 0,
  cxlcclUnhandledCudaError = 1, /* a CUDA call failed, or a device buffer without a GPU */
  cxlcclSystemError = 2,        /* a system call failed (open, mmap, flock...) */
  cxlcclInternalError = 3,      /* a broken invariant or a corrupt pool */
  cxlcclInvalidArgument = 4,    /* a null buffer, a bad count, type, op, rank or root */
  cxlcclInvalidUsage = 5,       /* ranks disagree (count, type, root), bad pool header, ... */
  cxlcclRemoteError = 6,        /* a peer died, stalled past the timeout, or aborted */
  cxlcclInProgress = 7,
  cxlcclNumResults = 8
} cxlcclResult_t;

typedef enum {
  cxlcclInt8 = 0,
  cxlcclChar = 0,
  cxlcclUint8 = 1,
  cxlcclInt32 = 2,
  cxlcclInt = 2,
  cxlcclUint32 = 3,
  cxlcclInt64 = 4,
  cxlcclUint64 = 5,
  cxlcclFloat16 = 6,
  cxlcclHalf = 6,
  cxlcclFloat32 = 7,
  cxlcclFloat = 7,
  cxlcclFloat64 = 8,
  cxlcclDouble = 8,
  cxlcclBfloat16 = 9,
  cxlcclNumTypes = 10,
  cxlcclDataTypeMax = 0x7fffffff /* any int is a value the library can check and refuse */
} cxlcclDataType_t;

typedef enum {
  cxlcclSum = 0,
  cxlcclProd = 1,
  cxlcclMax = 2,
  cxlcclMin = 3,
  cxlcclNumOps = 4,
  cxlcclRedOpMax = 0x7fffffff /* any int is a value the library can check and refuse */
} cxlcclRedOp_t;

/* How the library keeps the pool coherent between ranks. */
typedef enum {
  cxlcclCoherencePool = 0,     /* what the pool's header says (cxlccl-pool format --coherent) */
  cxlcclCoherenceHardware = 1, /* one host: fences only, no cache-line flushes */
  cxlcclCoherenceFlush = 2,    /* no coherence between hosts: clwb/clflushopt + fences */
  cxlcclCoherenceSimulate = 3  /* tests: each rank sees the pool through a private stale copy */
} cxlcclCoherence_t;

/* Delta publish (docs/cxlccl.md): a Broadcast or AllGather block that a rank published before,
 * from the same buffer and size, crosses the pool as the 64-byte lines that changed since; a
 * receiver whose buffer still holds the last result (untouched since) copies only those. Each
 * such buffer keeps a copy of itself in the pool. */
typedef enum {
  cxlcclDeltaOff = 0, /* every block whole, the usual way */
  cxlcclDeltaOn = 1,  /* always compare with the last copy and send the changed lines */
  cxlcclDeltaAuto = 2 /* compare, but send the usual way while most lines change */
} cxlcclDelta_t;

#define CXLCCL_UNIQUE_ID_BYTES 128
typedef struct {
  char internal[CXLCCL_UNIQUE_ID_BYTES];
} cxlcclUniqueId;

typedef struct cxlcclComm* cxlcclComm_t;

#define CXLCCL_CONFIG_MAGIC 0xcc1cc1u
#define CXLCCL_CONFIG_UNDEF_INT (-2147483647 - 1)
#define CXLCCL_CONFIG_UNDEF_SIZE SIZE_MAX

/* Grows only at the end; size, magic and version tell the library which fields a caller knows.
 * Start from CXLCCL_CONFIG_INITIALIZER: an undefined field takes its environment variable, else
 * its default (docs/cxlccl.md). */
typedef struct {
  size_t size;
  unsigned int magic;
  unsigned int version;
  int coherence;          /* cxlcclCoherence_t; CXLCCL_COHERENCE */
  int timeoutMs;          /* a call without progress for this long fails; CXLCCL_TIMEOUT_MS, 30000 */
  int heartbeatTimeoutMs; /* a peer whose heartbeat stops this long is dead; CXLCCL_HEARTBEAT_MS, 2000 */
  int lineBytes;          /* one flag per line of this many bytes (64..4096); CXLCCL_LINE_BYTES, 128 */
  size_t chunkBytes;      /* pipelining unit; CXLCCL_CHUNK_BYTES, 256 KiB */
  int chunks;             /* slots per rank's ring; CXLCCL_CHUNKS, 8 */
  int copyThreads;        /* threads sharing each large copy (1..16, 0: as many as the host's
                             CPUs per rank here, up to 4); CXLCCL_COPY_THREADS, 0 */
  int delta;              /* cxlcclDelta_t: Broadcast and AllGather blocks published before send
                             only their changed lines; CXLCCL_DELTA (off|on|auto), off */
} cxlcclConfig_t;

#define CXLCCL_CONFIG_INITIALIZER                                                                                                     \
  {                                                                                                                                   \
    sizeof(cxlcclConfig_t), CXLCCL_CONFIG_MAGIC, CXLCCL_VERSION_CODE, CXLCCL_CONFIG_UNDEF_INT, CXLCCL_CONFIG_UNDEF_INT,               \
        CXLCCL_CONFIG_UNDEF_INT, CXLCCL_CONFIG_UNDEF_INT, CXLCCL_CONFIG_UNDEF_SIZE, CXLCCL_CONFIG_UNDEF_INT, CXLCCL_CONFIG_UNDEF_INT, \
        CXLCCL_CONFIG_UNDEF_INT                                                                                                       \
  }

cxlcclResult_t cxlcclGetVersion(int* version);
const char* cxlcclGetErrorString(cxlcclResult_t result);
/* The message of the last failed call on this thread ("" when none). */
const char* cxlcclGetLastError(cxlcclComm_t comm);

/* A unique id naming a new communicator in the pool at $CXLCCL_POOL (default
 * /dev/shm/cxlccl.pool, created on first use). Pass it to every rank out of band. */
cxlcclResult_t cxlcclGetUniqueId(cxlcclUniqueId* uniqueId);
cxlcclResult_t cxlcclCommInitRank(cxlcclComm_t* comm, int nranks, cxlcclUniqueId commId, int rank);
cxlcclResult_t cxlcclCommInitRankConfig(cxlcclComm_t* comm, int nranks, cxlcclUniqueId commId, int rank, const cxlcclConfig_t* config);
/* Rank and size from the environment (CXLCCL_RANK/CXLCCL_NRANKS, Open MPI, PMI, Slurm, torchrun)
 * and the id from the job's id ($CXLCCL_JOB_ID, Slurm's job and step, torchrun's run id): ranks
 * of one job find each other in the pool with nothing passed between them. */
cxlcclResult_t cxlcclCommInitEnv(cxlcclComm_t* comm, const cxlcclConfig_t* config);
/* Waits until no peer still needs this rank's data, then leaves; the last rank out frees the
 * region. */
cxlcclResult_t cxlcclCommDestroy(cxlcclComm_t comm);
/* Leaves at once: peers waiting on this rank fail with cxlcclRemoteError. */
cxlcclResult_t cxlcclCommAbort(cxlcclComm_t comm);
cxlcclResult_t cxlcclCommGetAsyncError(cxlcclComm_t comm, cxlcclResult_t* asyncError);
/* Host memory in the pool at $CXLCCL_POOL (a region of its own, 2 MiB-rounded). A send buffer
 * there is published where it lies: peers copy it out directly, one copy instead of two (NCCL's
 * ncclMemAlloc, for the pool). Any collective takes it; communicators on other pools copy. */
cxlcclResult_t cxlcclMemAlloc(void** ptr, size_t size);
cxlcclResult_t cxlcclMemFree(void* ptr);
cxlcclResult_t cxlcclCommCount(const cxlcclComm_t comm, int* count);
cxlcclResult_t cxlcclCommUserRank(const cxlcclComm_t comm, int* rank);
/* The coherence mode the communicator resolved to (cxlcclCoherenceHardware, Flush or Simulate;
 * never Pool: the pool's header has been read by then). An extension of NCCL's API. */
cxlcclResult_t cxlcclCommCoherence(const cxlcclComm_t comm, int* mode);

/* What this rank's calls moved through the pool, and what delta publish did (counted since
 * the communicator was made; exact counts, not estimates). An extension of NCCL's API. */
typedef struct {
  uint64_t poolBytesWritten;   /* data written into the pool: rings, mirrors, change bits */
  uint64_t poolBytesRead;      /* data read from it (a delta writer's reads of its mirror included) */
  uint64_t deltaCalls;         /* blocks that went through delta publish, as writer or reader */
  uint64_t deltaLinePublishes; /* as the writer: only the changed lines sent */
  uint64_t deltaFullPublishes; /* as the writer: the whole block through its mirror (a new buffer,
                                  or back from sending the usual way) */
  uint64_t deltaRingPublishes; /* as the writer: the usual way (auto, most lines changing) */
  uint64_t deltaLineApplies;   /* as a reader: only the changed lines copied */
  uint64_t deltaFullApplies;   /* as a reader: the whole block copied */
  uint64_t deltaFallbacks;     /* full copies where lines were sent: no previous copy held, or the
                                  receive buffer was written since the last call */
  uint64_t deltaLinesCompared; /* lines checked (hashed by the KiB; compared where their KiB changed) */
  uint64_t deltaLinesChanged;
} cxlcclCommStats_t;
cxlcclResult_t cxlcclCommStats(const cxlcclComm_t comm, cxlcclCommStats_t* stats);

/* Collectives. In place as in NCCL: AllGather when sendbuff == recvbuff + rank * sendcount,
 * Gather at the root when sendbuff == recvbuff + root * sendcount, Scatter at the root when
 * recvbuff == sendbuff + root * recvcount, ReduceScatter when sendbuff == recvbuff - rank *
 * recvcount (all in elements), the others when sendbuff == recvbuff. `stream` must be NULL for
 * host buffers. */
cxlcclResult_t cxlcclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount, cxlcclDataType_t datatype, cxlcclComm_t comm,
                               cudaStream_t stream);
cxlcclResult_t cxlcclBroadcast(const void* sendbuff, void* recvbuff, size_t count, cxlcclDataType_t datatype, int root, cxlcclComm_t comm,
                               cudaStream_t stream);
cxlcclResult_t cxlcclGather(const void* sendbuff, void* recvbuff, size_t sendcount, cxlcclDataType_t datatype, int root, cxlcclComm_t comm,
                            cudaStream_t stream);
cxlcclResult_t cxlcclScatter(const void* sendbuff, void* recvbuff, size_t recvcount, cxlcclDataType_t datatype, int root, cxlcclComm_t comm,
                             cudaStream_t stream);
cxlcclResult_t cxlcclReduce(const void* sendbuff, void* recvbuff, size_t count, cxlcclDataType_t datatype, cxlcclRedOp_t op, int root,
                            cxlcclComm_t comm, cudaStream_t stream);
cxlcclResult_t cxlcclAllReduce(const void* sendbuff, void* recvbuff, size_t count, cxlcclDataType_t datatype, cxlcclRedOp_t op,
                               cxlcclComm_t comm, cudaStream_t stream);
cxlcclResult_t cxlcclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount, cxlcclDataType_t datatype, cxlcclRedOp_t op,
                                   cxlcclComm_t comm, cudaStream_t stream);
/* count elements to every rank: sendbuff holds nranks blocks of count, block r goes to rank r. */
cxlcclResult_t cxlcclAllToAll(const void* sendbuff, void* recvbuff, size_t count, cxlcclDataType_t datatype, cxlcclComm_t comm,
                              cudaStream_t stream);

/* Point to point. Outside a group a Send returns once its data sits in the pool, which for
 * messages larger than the pair's ring needs the peer to be receiving: put a Send and a Recv
 * that depend on each other between GroupStart and GroupEnd, which runs them together. */
cxlcclResult_t cxlcclSend(const void* sendbuff, size_t count, cxlcclDataType_t datatype, int peer, cxlcclComm_t comm, cudaStream_t stream);
cxlcclResult_t cxlcclRecv(void* recvbuff, size_t count, cxlcclDataType_t datatype, int peer, cxlcclComm_t comm, cudaStream_t stream);
cxlcclResult_t cxlcclGroupStart(void);
cxlcclResult_t cxlcclGroupEnd(void);

#ifdef __cplusplus
}
#endif

#endif /* CXLCCL_H_ */
