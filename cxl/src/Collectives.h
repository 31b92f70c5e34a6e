#pragma once
// The collectives as plans for an Operation. Arguments are checked by the caller (Api.cpp);
// each plan lists every rank's pieces in the same order on every rank.

#include <cstddef>

#include "Delta.h"
#include "Engine.h"

namespace cxlccl {

struct CallArgs {
  const void* send = nullptr;
  void* recv = nullptr;
  std::size_t count = 0;  // per rank's block, as each collective's API defines it
  cxlcclDataType_t type = cxlcclUint8;
  cxlcclRedOp_t op = cxlcclSum;
  int root = 0;
};

enum class Collective { allGather, broadcast, gather, scatter, reduce, allReduce, reduceScatter, allToAll };
const char* collectiveName(Collective kind);

// Plans and runs one collective on `comm` with the operation object `op`; Broadcast and
// AllGather through delta publish when `delta` is given and takes the call's size.
Status runCollective(Comm& comm, Operation& op, Collective kind, const CallArgs& args, DeltaState* delta = nullptr);

struct P2pCall {
  bool send = true;
  const void* sendBuffer = nullptr;
  void* recvBuffer = nullptr;
  std::size_t bytes = 0;
  int peer = 0;
};
// Plans the calls (a group, or one call) and runs them together.
Status runPointToPoint(Comm& comm, Operation& op, const P2pCall* calls, std::size_t count);

}  // namespace cxlccl
