"""Trains a small model with DistributedDataParallel under one backend and writes what it saw.

    torchrun --nproc_per_node 2 ddp_train.py --backend cxlccl --steps 40 --out PREFIX

Same seed for every backend: the model's initial weights (rank 0's, broadcast by DDP), each
rank's data shard, the optimizer. Each rank writes PREFIX.rank<R>.json: its loss at every step
and the final parameters. tests/torch/run.sh compares the files of two backends.
"""

import argparse
import json

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

import cxlccl_torch  # noqa: F401  (registers "cxlccl")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", required=True)
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()

    dist.init_process_group(args.backend)
    rank = dist.get_rank()
    torch.manual_seed(1234 + rank)  # differing initial weights: DDP must broadcast rank 0's
    model = torch.nn.Sequential(torch.nn.Linear(32, 256), torch.nn.ReLU(), torch.nn.Linear(256, 64), torch.nn.ReLU(),
                                torch.nn.Linear(64, 1))
    model.register_buffer("seen", torch.zeros(1, dtype=torch.int64))  # a buffer DDP broadcasts each step
    ddp = DistributedDataParallel(model, bucket_cap_mb=0.05)  # several buckets per step
    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.01, momentum=0.5)
    data = torch.Generator().manual_seed(99 + rank)
    truth = torch.randn(32, 1, generator=torch.Generator().manual_seed(7))

    losses = []
    for _ in range(args.steps):
        x = torch.randn(64, 32, generator=data)
        y = x @ truth + 0.1 * torch.randn(64, 1, generator=data)
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(ddp(x), y)
        loss.backward()
        optimizer.step()
        model.seen += 1
        losses.append(loss.item())

    params = [p.detach().flatten().tolist() for p in model.parameters()]
    with open(f"{args.out}.rank{rank}.json", "w") as f:
        json.dump({"backend": args.backend, "losses": losses, "params": params}, f)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
