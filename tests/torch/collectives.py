"""Every collective of the torch.distributed backend "cxlccl" against gloo's result.

Run by torchrun with 2 or more ranks (tests/torch/run.sh). Each case runs on a cxlccl group and
on a gloo group with the same inputs; where gloo lacks the call (torch 1.13's gloo has no
reduce_scatter, all_gather_into_tensor, list all_to_all, AVG, ...) the result is checked against
a reference every rank computes from all ranks' inputs. Integer and bool results must be equal
exactly, floating ones within their dtype's rounding. Dtypes: all libcxlccl has, plus int16,
bool and complex64; sizes odd and even; contiguous and strided tensors. Prints one line per
call, "PASS: N cases" at the end, and exits 1 at the first mismatch.
"""

import os
import sys

import torch
import torch.distributed as dist

import cxlccl_torch  # noqa: F401  (registers "cxlccl")

DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int8, torch.uint8, torch.int16, torch.int32,
          torch.int64, torch.bool, torch.complex64]
SIZES = [1, 7, 4099, 65536 + 3]
R = dist.ReduceOp
TOLERANCE = {torch.float16: 1e-2, torch.bfloat16: 2e-2, torch.float32: 1e-5, torch.float64: 1e-12, torch.complex64: 1e-5}


def make(rank, size, dtype, case, strided):
    """Rank `rank`'s input for one case: small values (products and sums stay exact), strided on demand."""
    g = torch.Generator().manual_seed(1000003 * case + rank)
    n = size
    if dtype == torch.bool:
        t = torch.randint(0, 2, (n,), generator=g).bool()
    elif dtype == torch.complex64:
        t = torch.complex(torch.randn(n, generator=g), torch.randn(n, generator=g))
    elif dtype.is_floating_point:
        t = (torch.rand(n, generator=g) + 0.5).to(dtype)
    elif dtype == torch.uint8:
        t = torch.randint(0, 6, (n,), generator=g).to(dtype)
    else:
        t = torch.randint(-5, 6, (n,), generator=g).to(dtype)
    return laid_out(t, strided)


def laid_out(t, strided):
    """t, or a strided view (every other element of a larger tensor) holding the same values."""
    if not strided:
        return t
    spaced = torch.zeros(t.numel(), 2, dtype=t.dtype)
    spaced[:, 0] = t
    return spaced[:, 0]


def blank(count, dtype, strided):
    return laid_out(torch.zeros(count, dtype=dtype), strided)


OP_NAMES = {"SUM": R.SUM, "PRODUCT": R.PRODUCT, "MIN": R.MIN, "MAX": R.MAX, "AVG": R.AVG}


def ops_for(dtype):
    """(name, op) pairs that apply to dtype."""
    if dtype == torch.complex64:
        names = ["SUM", "AVG"]
    else:
        names = ["SUM", "PRODUCT", "MIN", "MAX"] + (["AVG"] if dtype.is_floating_point else [])
    return [(name, OP_NAMES[name]) for name in names]


def reduced(tensors, op):
    """The reference reduction of the ranks' tensors."""
    stack = torch.stack([t.clone() for t in tensors])
    dtype = tensors[0].dtype
    if dtype == torch.bool:
        return stack.any(0) if op in (R.SUM, R.MAX) else stack.all(0)
    if dtype in (torch.float16, torch.bfloat16):  # the CPU has no half-precision prod: exact in float32, rounded once
        return reduced([t.float() for t in tensors], op).to(dtype)
    if op == R.SUM:
        return stack.sum(0, dtype=dtype)
    if op == R.AVG:
        return stack.sum(0, dtype=dtype) / len(tensors)
    if op == R.PRODUCT:
        return stack.prod(0, dtype=dtype)
    return stack.amin(0) if op == R.MIN else stack.amax(0)


def same(got, want):
    if got.dtype != want.dtype or got.shape != want.shape:
        return False
    if got.dtype in TOLERANCE:
        tol = TOLERANCE[got.dtype]
        return torch.allclose(got, want, rtol=tol, atol=tol)
    return torch.equal(got, want)


class Checker:
    def __init__(self, cx, gloo):
        self.cx, self.gloo, self.cases, self.by_reference = cx, gloo, 0, set()
        self.rank, self.world = dist.get_rank(), dist.get_world_size()
        self.strided = False  # the layout of the case being checked, for cxlccl's run

    def check(self, name, run, reference):
        """run(group, strided) returns the tensors to compare; reference() computes them without a
        group. Gloo always gets contiguous inputs: torch 1.13's gloo reduces a strided tensor's
        storage as if it were contiguous (wrong results, no error)."""
        got = run(self.cx, self.strided)
        try:
            want = run(self.gloo, False)
        except RuntimeError as error:  # gloo in torch 1.13 lacks this call, op or dtype
            want = reference()
            self.by_reference.add(f"{name.split(' ')[0]} ({str(error).splitlines()[0][:60]})")
        for g, w in zip(got, want):
            if not same(g, w):
                bad = (g != w).nonzero()[:5].flatten().tolist() if g.shape == w.shape else "shape"
                print(f"FAIL rank {self.rank}: {name}: cxlccl and the reference differ at {bad}:\n{g[:8]}\n{w[:8]}", flush=True)
                sys.exit(1)
        self.cases += 1


def run_cases(c):
    rank, world = c.rank, c.world
    case = 0
    for dtype in DTYPES:
        for size in SIZES:
            for strided in (False, True):
                case += 1
                c.strided = strided
                label = f"{str(dtype)[6:]} x{size}{' strided' if strided else ''}"
                mine = lambda s, r=rank, k=case: make(r, size, dtype, k, s)  # noqa: E731
                every = lambda k=case: [make(r, size, dtype, k, False) for r in range(world)]  # noqa: E731

                for op_name, op in ops_for(dtype):
                    def allreduce(group, s, op=op):
                        t = mine(s)
                        dist.all_reduce(t, op, group=group)
                        return [t]
                    c.check(f"all_reduce {op_name} {label}", allreduce, lambda op=op: [reduced(every(), op)])

                    def reduce(group, s, op=op):
                        t = mine(s)
                        dist.reduce(t, 0, op, group=group)
                        return [t] if rank == 0 else []
                    c.check(f"reduce {op_name} {label}", reduce, lambda op=op: [reduced(every(), op)] if rank == 0 else [])

                def broadcast(group, s):
                    t = mine(s)
                    dist.broadcast(t, world - 1, group=group)
                    return [t]
                c.check(f"broadcast {label}", broadcast, lambda: [every()[world - 1]])

                def all_gather(group, s):
                    out = [blank(size, dtype, s) for _ in range(world)]
                    dist.all_gather(out, mine(s), group=group)
                    return out
                c.check(f"all_gather {label}", all_gather, every)

                def all_gather_into_tensor(group, s):
                    out = blank(world * size, dtype, s)
                    dist.all_gather_into_tensor(out, mine(s), group=group)
                    return [out]
                c.check(f"all_gather_into_tensor {label}", all_gather_into_tensor, lambda: [torch.cat(every())])

                def gather(group, s):
                    out = [blank(size, dtype, s) for _ in range(world)] if rank == 0 else None
                    dist.gather(mine(s), out, 0, group=group)
                    return out if rank == 0 else []
                c.check(f"gather {label}", gather, lambda: every() if rank == 0 else [])

                def scatter(group, s):
                    out = blank(size, dtype, s)
                    pieces = [make(r, size, dtype, case + 7777, s) for r in range(world)] if rank == 1 % world else None
                    dist.scatter(out, pieces, 1 % world, group=group)
                    return [out]
                c.check(f"scatter {label}", scatter, lambda: [make(rank, size, dtype, case + 7777, False)])

                for op_name, op in ops_for(dtype):
                    def reduce_scatter(group, s, op=op):
                        out = blank(size, dtype, s)
                        pieces = [make(rank * world + r, size, dtype, case, s) for r in range(world)]
                        dist.reduce_scatter(out, pieces, op, group=group)
                        return [out]
                    c.check(f"reduce_scatter {op_name} {label}", reduce_scatter,
                            lambda op=op: [reduced([make(r * world + rank, size, dtype, case, False) for r in range(world)], op)])

                    def reduce_scatter_tensor(group, s, op=op):
                        out = blank(size, dtype, s)
                        dist.reduce_scatter_tensor(out, torch.cat([make(rank * world + r, size, dtype, case, s)
                                                                   for r in range(world)]), op, group=group)
                        return [out]
                    c.check(f"reduce_scatter_tensor {op_name} {label}", reduce_scatter_tensor,
                            lambda op=op: [reduced([make(r * world + rank, size, dtype, case, False) for r in range(world)], op)])

                # all_to_all_single: equal splits, then rank r sends (j + r) % 3 + size rows to rank j.
                def all_to_all_equal(group, s):
                    inp = torch.cat([make(rank * world + j, size, dtype, case, s) for j in range(world)])
                    out = blank(inp.numel(), dtype, s)
                    dist.all_to_all_single(out, inp, group=group)
                    return [out]
                c.check(f"all_to_all_single {label}", all_to_all_equal,
                        lambda: [torch.cat([make(j * world + rank, size, dtype, case, False) for j in range(world)])])

                rows = lambda src, dst: (dst + src) % 3 + size  # noqa: E731

                def all_to_all_unequal(group, s):
                    inp = torch.cat([make(rank * world + j, rows(rank, j), dtype, case, s) for j in range(world)])
                    out = blank(sum(rows(j, rank) for j in range(world)), dtype, s)
                    dist.all_to_all_single(out, inp, [rows(j, rank) for j in range(world)], [rows(rank, j) for j in range(world)],
                                           group=group)
                    return [out]
                c.check(f"all_to_all_single (uneven) {label}", all_to_all_unequal,
                        lambda: [torch.cat([make(j * world + rank, rows(j, rank), dtype, case, False) for j in range(world)])])

                def all_to_all(group, s):
                    out = [blank(rows(j, rank), dtype, s) for j in range(world)]
                    dist.all_to_all(out, [make(rank * world + j, rows(rank, j), dtype, case, s) for j in range(world)], group=group)
                    return out
                c.check(f"all_to_all {label}", all_to_all,
                        lambda: [make(j * world + rank, rows(j, rank), dtype, case, False) for j in range(world)])

                # send/recv around the ring: even ranks send first, odd ranks receive first.
                def ring(group, s):
                    out = blank(size, dtype, s)
                    to, frm = (rank + 1) % world, (rank - 1) % world
                    if rank % 2 == 0:
                        dist.send(mine(s), to, group=group)
                        dist.recv(out, frm, group=group)
                    else:
                        dist.recv(out, frm, group=group)
                        dist.send(mine(s), to, group=group)
                    return [out]
                c.check(f"send/recv {label}", ring, lambda: [make((rank - 1) % world, size, dtype, case, False)])

                def batched(group, s):
                    out = blank(size, dtype, s)
                    ops = [dist.P2POp(dist.isend, mine(s), (rank + 1) % world, group),
                           dist.P2POp(dist.irecv, out, (rank - 1) % world, group)]
                    for request in dist.batch_isend_irecv(ops):
                        request.wait()
                    return [out]
                c.check(f"batch_isend_irecv {label}", batched, lambda: [make((rank - 1) % world, size, dtype, case, False)])
        print(f"rank {rank}: {dtype} passed", flush=True)


def unusable_pool_group():
    """A group whose pool cannot be made: rank 0 says why, and the others hear it at once."""
    os.environ["CXLCCL_POOL"], pool = "/nonexistent-dir/cxlccl.pool", os.environ.get("CXLCCL_POOL")
    try:
        dist.new_group(backend="cxlccl")
    finally:
        os.environ["CXLCCL_POOL"] = pool


def check_refusals(cx):
    """Calls the backend cannot run raise an error that names them."""
    t = torch.ones(3, dtype=torch.int32)
    for call, needle in [(lambda: dist.all_reduce(t, dist.ReduceOp.BAND, group=cx), "BAND"),
                         (lambda: dist.all_reduce(t, dist.ReduceOp.AVG, group=cx), "AVG"),
                         (lambda: dist.recv(t, group=cx), "any source"),
                         (unusable_pool_group, "/nonexistent-dir/cxlccl.pool")]:
        try:
            call()
        except RuntimeError as error:
            if needle not in str(error) or "cxlccl" not in str(error):
                print(f"FAIL: the error does not name {needle!r}: {error}", flush=True)
                sys.exit(1)
        else:
            print(f"FAIL: a call with {needle} did not raise", flush=True)
            sys.exit(1)


def main():
    dist.init_process_group("gloo")
    cx = dist.new_group(backend="cxlccl")
    gloo = dist.new_group(backend="gloo")
    checker = Checker(cx, gloo)
    run_cases(checker)
    check_refusals(cx)
    dist.barrier(group=cx)
    if checker.rank == 0:
        print(f"checked against a reference where gloo lacks the call: {', '.join(sorted(checker.by_reference))}")
    print(f"PASS: rank {checker.rank}: {checker.cases} cases", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
