"""Compares two DDP runs' files (tests/torch/ddp_train.py): the same losses at every step on every
rank and the same final parameters, within float tolerance; and every rank's parameters equal
(DDP keeps replicas in sync). Usage: ddp_compare.py PREFIX_A PREFIX_B NRANKS"""

import json
import math
import sys


def load(prefix, rank):
    with open(f"{prefix}.rank{rank}.json") as f:
        return json.load(f)


def flat(params):
    return [x for p in params for x in p]


def worst(a, b):
    """The largest relative gap; infinite where a value is not finite (a diverged run proves nothing)."""
    gaps = [abs(x - y) / max(1.0, abs(y)) for x, y in zip(a, b)]
    return max(gap if math.isfinite(gap) else math.inf for gap in gaps)


def main():
    prefix_a, prefix_b, nranks = sys.argv[1], sys.argv[2], int(sys.argv[3])
    tolerance = 1e-5
    for rank in range(nranks):
        a, b = load(prefix_a, rank), load(prefix_b, rank)
        if len(a["losses"]) != len(b["losses"]):
            sys.exit(f"FAIL: rank {rank}: {len(a['losses'])} steps against {len(b['losses'])}")
        loss_gap, param_gap = worst(a["losses"], b["losses"]), worst(flat(a["params"]), flat(b["params"]))
        print(f"rank {rank}: {a['backend']} vs {b['backend']}: {len(a['losses'])} steps, loss {a['losses'][0]:.4f} -> "
              f"{a['losses'][-1]:.4f}; largest relative gap: losses {loss_gap:.2e}, parameters {param_gap:.2e}")
        if loss_gap > tolerance or param_gap > tolerance:
            sys.exit(f"FAIL: rank {rank}: {a['backend']} and {b['backend']} disagree beyond {tolerance}")
        if a["losses"][-1] >= a["losses"][0]:
            sys.exit(f"FAIL: rank {rank}: the loss did not fall ({a['losses'][0]} -> {a['losses'][-1]}): the test proves nothing")
        if rank > 0 and worst(flat(a["params"]), flat(load(prefix_a, 0)["params"])) > 0:
            sys.exit(f"FAIL: rank {rank}'s parameters differ from rank 0's under {a['backend']}: DDP replicas out of sync")
    print("PASS: the runs agree")


if __name__ == "__main__":
    main()
