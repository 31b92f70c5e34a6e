#!/bin/sh
# In a VM-lab guest: rank $1 of 2 of an AllGather whose pool is the ivshmem device both guests
# share (BAR 2, mapped through sysfs).
set -e
pool=
for d in /sys/bus/pci/devices/*; do
  if [ "$(cat "$d/vendor")" = 0x1af4 ] && [ "$(cat "$d/device")" = 0x1110 ]; then pool=$d; fi
done
[ -n "$pool" ] || { echo "FAIL: no ivshmem device"; exit 1; }
echo 1 > "$pool/enable"
export CXLCCL_POOL=$pool/resource2 CXLCCL_RANK=$1 CXLCCL_NRANKS=2 CXLCCL_JOB_ID=vmlab-two-hosts
export CXLCCL_TIMEOUT_MS=120000 CXLCCL_HEARTBEAT_MS=20000 CXLCCL_DEBUG=INFO
cxlccl-test-allgather
echo "PASS cxl-two-hosts rank=$1"
