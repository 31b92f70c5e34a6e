"""libcxlccl for torch.distributed: importing this package registers the backend "cxlccl".

    import torch.distributed as dist
    import cxlccl_torch  # noqa: F401
    dist.init_process_group("cxlccl")   # under torchrun, mpirun or srun

Ranks of one group must share a pool (CXLCCL_POOL, or the one mtmd serves); the communicator's
id travels through the process group's store. See docs/cxlccl.md, "PyTorch".
"""

import atexit

import torch.distributed as _dist

from . import _C

BACKEND = "cxlccl"


def version():
    """libcxlccl's version code (major * 10000 + minor * 100 + patch)."""
    return _C.version()


def _create(store, rank, world_size, timeout):
    return _C.create_process_group(store, rank, world_size, timeout)


if BACKEND.upper() not in _dist.Backend._plugins:
    _dist.Backend.register_backend(BACKEND, _create)
    # torch 1.13 never destroys the default process group; leave the pool tidily at exit.
    atexit.register(_C.shutdown_all)
