"""torch.distributed collectives under "cxlccl" against "gloo" in the same run (tools/bench-torch).

Run by torchrun; every rank times all_reduce (float32, sum), all_gather (all_gather_into_tensor)
and broadcast at each size, both backends alternating per size so that both see the machine in
the same state. Size is the whole vector in bytes, as in nccl-tests: all_gather's output. A
call's time is the slowest rank's mean over as many calls as fill --seconds (at least 5); the
figure is the median of --rounds such measurements. Rank 0 writes JSON lines to --out.
"""

import argparse
import json
import math
import statistics
import time

import torch
import torch.distributed as dist

import cxlccl_torch  # noqa: F401  (registers "cxlccl")


def size_arg(text):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(text[:-1]) * units[text[-1].upper()] if text[-1].upper() in units else int(text)


def call_for(coll, backend, nbytes, world, rank):
    """One call of `coll` on `nbytes` as a function of the group."""
    count = nbytes // 4
    if coll == "all_reduce":
        t = torch.ones(count)
        return lambda group: dist.all_reduce(t, group=group)
    if coll == "broadcast":
        t = torch.full((count,), float(rank))
        return lambda group: dist.broadcast(t, 0, group=group)
    out, mine = torch.empty(count), torch.full((count // world,), float(rank))
    if backend != "gloo":
        return lambda group: dist.all_gather_into_tensor(out, mine, group=group)
    # torch 1.13's gloo has no all_gather_into_tensor: its list form, then one tensor, as a user would.
    pieces = [torch.empty(count // world) for _ in range(world)]

    def gloo_all_gather(group):
        dist.all_gather(pieces, mine, group=group)
        torch.cat(pieces, out=out)
    return gloo_all_gather


def slowest(value):
    t = torch.tensor([value], dtype=torch.float64)
    dist.all_reduce(t, dist.ReduceOp.MAX)  # on the default (gloo) group, outside the timing
    return t.item()


def time_calls(call, group, seconds):
    for _ in range(2):
        call(group)
    start = time.perf_counter()
    for _ in range(3):
        call(group)
    probe = (time.perf_counter() - start) / 3
    count = int(slowest(max(5, math.ceil(seconds / max(probe, 1e-7)))))
    dist.barrier()
    start = time.perf_counter()
    for _ in range(count):
        call(group)
    return slowest((time.perf_counter() - start) / count)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--min", type=size_arg, default=4096)
    parser.add_argument("--max", type=size_arg, default=64 << 20)
    parser.add_argument("--factor", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=0.2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--colls", default="all_reduce,all_gather,broadcast")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    groups = {"cxlccl": dist.new_group(backend="cxlccl"), "gloo": dist.new_group(backend="gloo")}
    sizes = []
    size = args.min
    while size <= args.max:
        sizes.append(size)
        size *= args.factor
    out = open(args.out, "w") if rank == 0 else None
    for coll in args.colls.split(","):
        for nbytes in sizes:
            times = {name: [] for name in groups}
            for _ in range(args.rounds):
                for name, group in groups.items():
                    call = call_for(coll, name, nbytes, world, rank)
                    times[name].append(time_calls(call, group, args.seconds))
            if rank == 0:
                row = {"coll": coll, "bytes": nbytes, "ranks": world, "rounds": args.rounds,
                       **{f"{name}_us": statistics.median(t) * 1e6 for name, t in times.items()},
                       **{f"{name}_all_us": [x * 1e6 for x in t] for name, t in times.items()}}
                out.write(json.dumps(row) + "\n")
                out.flush()
                print(f"{coll:>10} {nbytes:>10} cxlccl {row['cxlccl_us']:10.1f} us  gloo {row['gloo_us']:10.1f} us  "
                      f"{row['gloo_us'] / row['cxlccl_us']:6.2f}x", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
