#!/usr/bin/env bash
# Ranks started by torchrun (python3 -m torch.distributed.run --no_python): rank from
# RANK/WORLD_SIZE, job id from TORCHELASTIC_RUN_ID.
# Usage: torchrun.sh PYTHON PATH/cxlccl-test-launched
set -euo pipefail
. "$(dirname "$0")/common.sh"
python=$1 program=$2
"$python" -c "import torch.distributed.run" 2> /dev/null || skip "$python has no torch (tools/install-deps installs python3-torch)"
port=$(free_port)
# shellcheck disable=SC2046
"$python" -m torch.distributed.run --nnodes 1 --nproc_per_node 2 --rdzv_backend c10d --rdzv_endpoint "127.0.0.1:$port" \
  --rdzv_id "launcher-test-$$" $(torchrun_streams "$scratch/logs") --no_python "$program" --seconds 0.5 > "$scratch/one.out"
check_job "$scratch/one.out" 2
echo "PASS: torchrun"
