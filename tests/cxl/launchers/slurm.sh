#!/usr/bin/env bash
# Ranks started by Slurm's srun on a one-node cluster that this test brings up from Debian's
# packages and tears down after: munged, slurmctld and slurmd on localhost, with a generated
# slurm.conf in a scratch directory (nothing under /etc is touched). One job of 2 ranks, then two
# at once: their job ids (SLURM_JOB_ID.SLURM_STEP_ID) keep their pool regions apart.
# Usage: slurm.sh PATH/cxlccl-test-launched   (root: slurmd launches the tasks as their user)
set -euo pipefail
. "$(dirname "$0")/common.sh"
program=$1
[ "$(id -u)" -eq 0 ] || skip "slurmd needs root"
for daemon in munged slurmctld slurmd srun; do
  command -v "$daemon" > /dev/null || skip "$daemon not found (tools/install-deps installs slurm-wlm and munge)"
done

daemons=()
teardown() {
  for pid in "${daemons[@]}"; do kill "$pid" 2> /dev/null || true; done
  for pid in "${daemons[@]}"; do wait "$pid" 2> /dev/null || true; done
  cleanup_scratch
}
trap teardown EXIT

# Waits up to 30 s for CONDITION (a command), else fails naming WHAT, with LOG's tail.
await() {
  local what=$1 log=$2
  shift 2
  for _ in $(seq 300); do
    "$@" > /dev/null 2>&1 && return 0
    sleep 0.1
  done
  tail -20 "$log" >&2 || true
  fail "$what did not come up in 30 s (log: $log)"
}

mkdir -p "$scratch/state" "$scratch/spool"
dd if=/dev/urandom of="$scratch/munge.key" bs=1024 count=1 status=none
chmod 600 "$scratch/munge.key"
munged --foreground --force --socket="$scratch/munge.sock" --key-file="$scratch/munge.key" \
  --pid-file="$scratch/munged.pid" --seed-file="$scratch/munge.seed" --log-file="$scratch/munged.log" > "$scratch/munged.out" 2>&1 &
daemons+=($!)
await munged "$scratch/munged.log" munge --socket="$scratch/munge.sock" --no-input

node=cxlnode
export SLURM_CONF=$scratch/slurm.conf
cat > "$SLURM_CONF" << CONF
ClusterName=cxlccltest
SlurmctldHost=$(hostname -s)(127.0.0.1)
MailProg=/bin/true
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$scratch/munge.sock
CredType=cred/munge
StateSaveLocation=$scratch/state
SlurmdSpoolDir=$scratch/spool
SlurmctldPidFile=$scratch/slurmctld.pid
SlurmdPidFile=$scratch/slurmd.pid
SlurmctldLogFile=$scratch/slurmctld.log
SlurmdLogFile=$scratch/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
MpiDefault=none
ReturnToService=2
NodeName=$node NodeHostname=$(hostname) NodeAddr=127.0.0.1 CPUs=4 RealMemory=1024 State=UNKNOWN
PartitionName=test Nodes=$node Default=YES MaxTime=10 State=UP
CONF

slurmctld -D -i -f "$SLURM_CONF" > "$scratch/slurmctld.out" 2>&1 &
daemons+=($!)
await slurmctld "$scratch/slurmctld.log" scontrol ping
slurmd -D -N "$node" -f "$SLURM_CONF" > "$scratch/slurmd.out" 2>&1 &
daemons+=($!)
await "slurmd (node $node idle)" "$scratch/slurmd.log" bash -c "sinfo -h -N -o %t | grep -qx idle"
echo "slurm: one-node cluster up ($(sinfo -h -N -o '%N %c CPUs %t'))"

run=(srun --ntasks 2 --cpus-per-task 1 --time 2 --kill-on-bad-exit=1)
one_then_two_jobs srun "${run[@]}" "$program"
