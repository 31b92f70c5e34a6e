#pragma once
// The floor of an AllGather or AllToAll over ordinary buffers on one host: `ranks` processes,
// each reading every other one's block straight from its buffer with one process_vm_readv and
// copying its own -- the single copy that Open MPI's CMA path and libcxlccl's direct reads make
// -- kept in step by flags in shared memory and nothing else: no collective library, no
// argument checks, no rings. Prints "size us" rows, size as cxlccl-perf's (every block's bytes).

#include <cstddef>

namespace collperf {

int oneCopyFloorTable(int ranks, std::size_t minBytes, std::size_t maxBytes, int factor);

}  // namespace collperf
