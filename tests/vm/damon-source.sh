#!/bin/sh
# Runs inside a VM-lab guest (Debian 6.12: DAMON with vaddr, no other monitor): the damon_vaddr
# profiler source watches a workload with a known hot set, finds hot memory, and leaves no
# kdamond behind.
set -u
fail() { echo "FAIL: $*"; exit 1; }
mtm-test-hotset --size 256M --hot-fraction 0.1 --phases 1 --phase-seconds 120 --truth /tmp/truth --ready /tmp/ready &
w=$!
i=0
while [ ! -s /tmp/ready ]; do i=$((i + 1)); [ $i -gt 600 ] && fail "workload not ready"; sleep 0.1; done
mtmctl profile --pid $w --source damon_vaddr --duration 6 --record /tmp/d.jsonl > /tmp/out 2>&1 || fail "mtmctl profile: $(cat /tmp/out)"
cat /tmp/out
grep -q 'profiling 1 process(es) with damon_vaddr' /tmp/out || fail "damon_vaddr was not used"
# Some interval saw hot memory.
grep -E 'hot=[1-9][0-9.]* MiB' /tmp/out > /dev/null || fail "DAMON found nothing hot"
[ "$(cat /sys/kernel/mm/damon/admin/kdamonds/nr_kdamonds)" = "0" ] || fail "a kdamond was left behind"
mtmctl heatmap /tmp/d.jsonl -o /tmp/d.svg || fail "heatmap"
kill $w
echo "PASS damon-source"
