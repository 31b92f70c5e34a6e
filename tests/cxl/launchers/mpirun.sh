#!/usr/bin/env bash
# Ranks started by Open MPI's mpirun (rank from OMPI_COMM_WORLD_*, job id from the launcher):
# one job, then two at once, whose job ids must keep their pool regions apart.
# Usage: mpirun.sh PATH/cxlccl-test-launched
set -euo pipefail
. "$(dirname "$0")/common.sh"
program=$1
command -v mpirun > /dev/null || skip "mpirun not found (tools/install-deps installs openmpi-bin)"
launch=(mpirun -np 2 --oversubscribe --bind-to none)
if [ "$(id -u)" -eq 0 ]; then launch+=(--allow-run-as-root); fi

one_then_two_jobs mpirun "${launch[@]}" "$program"
