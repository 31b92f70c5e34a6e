#include "Collectives.h"

#include <cstring>
#include <vector>

#include "Reduce.h"

namespace cxlccl {
namespace {

std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdull;
}

std::uint64_t everyoneBut(int nranks, int rank) {
  std::uint64_t all = nranks == 64 ? ~0ull : (1ull << nranks) - 1;
  return all & ~(1ull << rank);
}

const std::byte* bytesAt(const void* base, std::size_t offset) {
  return static_cast<const std::byte*>(base) + offset;
}
std::byte* bytesAt(void* base, std::size_t offset) { return static_cast<std::byte*>(base) + offset; }

// AllReduce cuts the vector into nranks blocks of whole elements, the first `count % nranks` one
// element longer.
struct Blocks {
  std::size_t count, nranks, typeBytes;
  std::size_t elements(std::size_t r) const { return count / nranks + (r < count % nranks ? 1 : 0); }
  std::size_t offset(std::size_t r) const {
    return (r * (count / nranks) + std::min(r, count % nranks)) * typeBytes;
  }
  std::size_t bytes(std::size_t r) const { return elements(r) * typeBytes; }
};

}  // namespace

const char* collectiveName(Collective kind) {
  switch (kind) {
    case Collective::allGather: return "AllGather";
    case Collective::broadcast: return "Broadcast";
    case Collective::gather: return "Gather";
    case Collective::scatter: return "Scatter";
    case Collective::reduce: return "Reduce";
    case Collective::allReduce: return "AllReduce";
    case Collective::reduceScatter: return "ReduceScatter";
    case Collective::allToAll: return "AllToAll";
  }
  return "?";
}

Status runCollective(Comm& comm, Operation& op, Collective kind, const CallArgs& a) {
  const int n = comm.nranks();
  const int me = comm.rank();
  const std::size_t typeBytes = typeSize(a.type);
  const std::size_t bytes = a.count * typeBytes;
  std::uint64_t hash = mix(mix(mix(mix(mix(0, static_cast<std::uint64_t>(kind)), a.count),
                                   static_cast<std::uint64_t>(a.type)),
                               static_cast<std::uint64_t>(a.op)),
                           static_cast<std::uint64_t>(a.root));
  op.begin(comm.nextOp(), hash);
  op.setReduction(a.type, a.op);
  auto ring = [](int writer) { return Channel{writer, -1}; };
  const std::uint64_t toRoot = 1ull << a.root;

  switch (kind) {
    case Collective::allGather:
      for (int w = 0; w < n; ++w)
        op.piece(ring(w), bytes, everyoneBut(n, w), a.send, bytesAt(a.recv, w * bytes));
      op.copy(bytesAt(a.recv, me * bytes), a.send, bytes);
      break;
    case Collective::broadcast:
      op.piece(ring(a.root), bytes, everyoneBut(n, a.root), a.send, a.recv);
      if (me == a.root) op.copy(a.recv, a.send, bytes);
      break;
    case Collective::gather:
      for (int w = 0; w < n; ++w) {
        if (w != a.root)
          op.piece(ring(w), bytes, toRoot, a.send, me == a.root ? bytesAt(a.recv, w * bytes) : nullptr);
      }
      if (me == a.root) op.copy(bytesAt(a.recv, me * bytes), a.send, bytes);
      break;
    case Collective::scatter:
      for (int p = 0; p < n; ++p) {
        if (p != a.root) op.piece(ring(a.root), bytes, 1ull << p, bytesAt(a.send, p * bytes), a.recv);
      }
      if (me == a.root) op.copy(a.recv, bytesAt(a.send, me * bytes), bytes);
      break;
    case Collective::allToAll: {
      const void* send = a.send;
      const auto* sendBytes = static_cast<const std::byte*>(a.send);
      auto* recvBytes = static_cast<std::byte*>(a.recv);
      std::size_t total = bytes * static_cast<std::size_t>(n);
      if (sendBytes < recvBytes + total && recvBytes < sendBytes + total) {
        // In place: blocks still to be sent would be overwritten by blocks received.
        std::vector<std::byte>& copy = comm.scratch(total);
        CXLCCL_TRY(op.copyNow(copy.data(), a.send, total));
        send = copy.data();
      }
      for (int w = 0; w < n; ++w) {
        for (int p = 0; p < n; ++p) {
          if (p != w) op.piece(ring(w), bytes, 1ull << p, bytesAt(send, p * bytes), bytesAt(a.recv, w * bytes));
        }
      }
      op.copy(bytesAt(a.recv, me * bytes), bytesAt(send, me * bytes), bytes);
      break;
    }
    case Collective::reduce: {
      std::vector<Operation::Input> inputs(static_cast<std::size_t>(n));
      for (int w = 0; w < n; ++w) {
        if (w == a.root) continue;
        inputs[static_cast<std::size_t>(w)].piece = op.piece(ring(w), bytes, toRoot, a.send, nullptr);
      }
      if (me == a.root) {
        inputs[static_cast<std::size_t>(me)].local = static_cast<const std::byte*>(a.send);
        op.combine(a.recv, bytes, inputs);
      }
      break;
    }
    case Collective::reduceScatter:
    case Collective::allReduce: {
      // Reduce-scatter: rank p reduces block p of everyone's vector; AllReduce then gathers the
      // reduced blocks, each chunk published as soon as it is reduced.
      bool all = kind == Collective::allReduce;
      Blocks blocks{all ? a.count : a.count * static_cast<std::size_t>(n), static_cast<std::size_t>(n), typeBytes};
      std::vector<Operation::Input> inputs(static_cast<std::size_t>(n));
      for (int w = 0; w < n; ++w) {
        for (int p = 0; p < n; ++p) {
          if (p == w) continue;
          Operation::PieceRef ref = op.piece(ring(w), blocks.bytes(p), 1ull << p,
                                             bytesAt(a.send, blocks.offset(p)), nullptr);
          if (p == me) inputs[static_cast<std::size_t>(w)].piece = ref;
        }
      }
      inputs[static_cast<std::size_t>(me)].local = bytesAt(a.send, blocks.offset(me));
      void* mine = all ? bytesAt(a.recv, blocks.offset(me)) : a.recv;
      int combined = op.combine(mine, blocks.bytes(me), inputs);
      if (all) {
        for (int w = 0; w < n; ++w) {
          if (w == me) {
            op.publishCombined(ring(w), blocks.bytes(w), everyoneBut(n, w), mine, combined);
          } else {
            op.piece(ring(w), blocks.bytes(w), everyoneBut(n, w), nullptr, bytesAt(a.recv, blocks.offset(w)));
          }
        }
      }
      break;
    }
  }
  return op.run();
}

Status runPointToPoint(Comm& comm, Operation& op, const P2pCall* calls, std::size_t count) {
  op.begin(0, 0);
  std::vector<const P2pCall*> selfSends;  // to this rank itself: matched in order, copied
  std::size_t selfMatched = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const P2pCall& call = calls[i];
    if (call.peer == comm.rank()) {
      if (call.send) {
        selfSends.push_back(&call);
        continue;
      }
      if (selfMatched == selfSends.size() || selfSends[selfMatched]->bytes != call.bytes)
        return Status::error(cxlcclInvalidUsage, "a Recv from this rank itself (", call.bytes,
                             " bytes) needs a matching Send to itself earlier in the same group");
      op.copy(call.recvBuffer, selfSends[selfMatched++]->sendBuffer, call.bytes);
      continue;
    }
    Channel c = call.send ? Channel{comm.rank(), call.peer} : Channel{call.peer, comm.rank()};
    op.tag(comm.nextMessage(c), call.bytes);
    op.piece(c, call.bytes, 1ull << c.reader, call.sendBuffer, call.recvBuffer);
  }
  if (selfMatched != selfSends.size())
    return Status::error(cxlcclInvalidUsage, "a Send to this rank itself needs a matching Recv "
                         "from itself in the same group");
  return op.run();
}

}  // namespace cxlccl
