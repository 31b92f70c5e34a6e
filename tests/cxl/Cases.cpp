#include "Cases.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

#include "Ranks.h"

namespace cxlccl::test {

const char* kindName(Kind k) {
  static const char* const kNames[] = {"AllGather", "Broadcast", "Gather", "Scatter", "Reduce", "AllReduce", "ReduceScatter", "AllToAll"};
  return kNames[static_cast<int>(k)];
}
bool reduces(Kind k) { return k == Kind::reduce || k == Kind::allReduce || k == Kind::reduceScatter; }

int runCase(cxlcclComm_t comm, int rank, int n, const Case& c, DeviceStores* device) {
  const std::size_t eb = elementBytes(c.type);
  const std::size_t count = c.count;
  const std::size_t nsz = static_cast<std::size_t>(n);
  const bool prod = c.op == cxlcclProd && reduces(c.kind);
  // Buffer sizes in elements.
  std::size_t sendCount = count, recvCount = count;
  switch (c.kind) {
    case Kind::allGather:
    case Kind::gather:
      recvCount = count * nsz;
      break;
    case Kind::scatter:
      sendCount = count * nsz;
      break;
    case Kind::reduceScatter:
      sendCount = count * nsz;
      break;
    case Kind::allToAll:
      sendCount = recvCount = count * nsz;
      break;
    default:
      break;
  }
  auto in = [&](std::size_t r, std::size_t i) { return inputValue(static_cast<int>(r), i, c.seed, prod, c.type); };
  std::vector<std::int64_t> mine(sendCount);
  for (std::size_t i = 0; i < sendCount; ++i) mine[i] = in(static_cast<std::size_t>(rank), i);
  std::vector<std::int64_t> firstBlock(mine.begin(), mine.begin() + static_cast<std::ptrdiff_t>(count));
  // Buffers are reused from case to case: fresh ones would spend the time in page faults.
  static std::vector<unsigned char> sendStore, recvStore;
  const std::size_t storeBytes = std::max(recvCount, sendCount) * eb + 1;
  sendStore.resize(std::max(sendStore.size(), storeBytes));
  recvStore.resize(std::max(recvStore.size(), storeBytes));
  void* send = sendStore.data();
  void* recv = recvStore.data();
  auto* recvBytes = static_cast<unsigned char*>(recv);
  fill(send, c.type, mine);
  std::memset(recv, 0xa5, std::max(recvCount, sendCount) * eb);
  bool root = rank == c.root;
  if (c.inPlace) {
    switch (c.kind) {
      case Kind::allGather:
        send = recvBytes + rank * count * eb;
        fill(send, c.type, firstBlock);
        break;
      case Kind::gather:
        if (root) {
          send = recvBytes + rank * count * eb;
          fill(send, c.type, firstBlock);
        }
        break;
      case Kind::scatter:
        if (root) recv = static_cast<unsigned char*>(send) + rank * count * eb;
        break;
      case Kind::reduceScatter:
        recv = static_cast<unsigned char*>(send) + rank * count * eb;
        break;
      default:  // broadcast, reduce, allReduce, allToAll: one buffer
        fill(recv, c.type, mine);
        send = recv;
        break;
    }
  }
  // On a device: the same layout in device copies of the two stores.
  cudaStream_t stream = nullptr;
  void* hostRecv = recv;
  if (device != nullptr) {
    auto move = [&](void* p) -> void* {
      auto* b = static_cast<unsigned char*>(p);
      if (b >= sendStore.data() && b < sendStore.data() + sendStore.size()) return device->send() + (b - sendStore.data());
      return device->recv() + (b - recvStore.data());
    };
    device->upload(sendStore.data(), recvStore.data(), storeBytes);
    send = move(send);
    recv = move(recv);
    stream = device->stream();
  }
  cxlcclResult_t result = cxlcclSuccess;
  switch (c.kind) {
    case Kind::allGather:
      result = cxlcclAllGather(send, recv, count, c.type, comm, stream);
      break;
    case Kind::broadcast:
      result = cxlcclBroadcast(send, recv, count, c.type, c.root, comm, stream);
      break;
    case Kind::gather:
      result = cxlcclGather(send, recv, count, c.type, c.root, comm, stream);
      break;
    case Kind::scatter:
      result = cxlcclScatter(send, recv, count, c.type, c.root, comm, stream);
      break;
    case Kind::reduce:
      result = cxlcclReduce(send, recv, count, c.type, c.op, c.root, comm, stream);
      break;
    case Kind::allReduce:
      result = cxlcclAllReduce(send, recv, count, c.type, c.op, comm, stream);
      break;
    case Kind::reduceScatter:
      result = cxlcclReduceScatter(send, recv, count, c.type, c.op, comm, stream);
      break;
    case Kind::allToAll:
      result = cxlcclAllToAll(send, recv, count, c.type, comm, stream);
      break;
  }
  if (result != cxlcclSuccess) {
    std::fprintf(stderr, "rank %d: %s: %s\n", rank, kindName(c.kind), cxlcclGetLastError(comm));
    return 1;
  }
  if (device != nullptr) {
    device->download(sendStore.data(), recvStore.data(), storeBytes);
    recv = hostRecv;
  }
  if ((c.kind == Kind::gather || c.kind == Kind::reduce) && !root) return 0;
  auto reduced = [&](std::size_t i) {
    std::int64_t acc = in(0, i);
    for (std::size_t r = 1; r < nsz; ++r) acc = reduceRef(acc, in(r, i), c.op, c.type);
    return acc;
  };
  std::vector<std::int64_t> expected(c.kind == Kind::reduceScatter ? count : recvCount);
  for (std::size_t i = 0; i < expected.size(); ++i) {
    std::size_t block = i / count, at = i % count;
    switch (c.kind) {
      case Kind::allGather:
      case Kind::gather:
        expected[i] = in(block, at);
        break;
      case Kind::broadcast:
        expected[i] = in(static_cast<std::size_t>(c.root), i);
        break;
      case Kind::scatter:
        expected[i] = in(static_cast<std::size_t>(c.root), rank * count + i);
        break;
      case Kind::allToAll:
        expected[i] = in(block, rank * count + at);
        break;
      case Kind::reduce:
      case Kind::allReduce:
        expected[i] = reduced(i);
        break;
      case Kind::reduceScatter:
        expected[i] = reduced(rank * count + i);
        break;
    }
  }
  long long bad = firstMismatch(recv, c.type, expected);
  if (bad >= 0) {
    std::fprintf(stderr, "rank %d of %d: %s type %d op %d count %zu%s root %d%s: element %lld wrong\n", rank, n, kindName(c.kind),
                 static_cast<int>(c.type), static_cast<int>(c.op), count, c.inPlace ? " in place" : "", c.root,
                 device != nullptr ? " on a GPU" : "", bad);
    return 1;
  }
  return 0;
}

}  // namespace cxlccl::test
