#!/usr/bin/env bash
# Runs a tests/torch script under torchrun (python3 -m torch.distributed.run) with 2 ranks on one
# node, in a pool of its own, with the build tree's cxlccl_torch package on PYTHONPATH.
#   run.sh PYTHON PYTHONPATH collectives           every collective against gloo
#   run.sh PYTHON PYTHONPATH ddp                   DDP training under cxlccl and gloo, compared
set -euo pipefail
python=$1 package_path=$2 what=$3
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../cxl/launchers/common.sh"
"$python" -c "import torch.distributed.run" 2> /dev/null || skip "$python has no torch (tools/install-deps installs python3-torch)"
export PYTHONPATH=$package_path${PYTHONPATH:+:$PYTHONPATH}
export OMP_NUM_THREADS=1

torchrun() {
  local port
  port=$(free_port)
  "$python" -m torch.distributed.run --nnodes 1 --nproc_per_node 2 --rdzv_backend c10d --rdzv_endpoint "127.0.0.1:$port" \
    --rdzv_id "cxlccl-test-$$-$port" $(torchrun_streams "$scratch/logs-$port") "$@"
}

case $what in
  collectives) torchrun "$here/collectives.py" ;;
  ddp)
    for backend in cxlccl gloo; do torchrun "$here/ddp_train.py" --backend $backend --steps 40 --out "$scratch/$backend"; done
    "$python" "$here/ddp_compare.py" "$scratch/cxlccl" "$scratch/gloo" 2
    ;;
  *) echo "run.sh: unknown test '$what' (collectives or ddp)" >&2; exit 2 ;;
esac
