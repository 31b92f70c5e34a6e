#!/bin/sh
# Runs inside a VM-lab guest (Debian 6.12: DAMON with vaddr, no other monitor): the damon_vaddr
# profiler source watches a workload with a known hot set, ranks hot memory first, and leaves no
# kdamond behind.
set -u
fail() { echo "FAIL: $*"; exit 1; }
mtm-test-hotset --size 256M --hot-fraction 0.1 --phases 1 --phase-seconds 120 --truth /tmp/truth --ready /tmp/ready &
w=$!
i=0
while [ ! -s /tmp/ready ]; do i=$((i + 1)); [ $i -gt 600 ] && fail "workload not ready"; sleep 0.1; done
mtmctl profile --pid $w --source damon_vaddr --duration 10 --record /tmp/d.jsonl > /tmp/out 2>&1 || fail "mtmctl profile: $(cat /tmp/out)"
cat /tmp/out
grep -q 'profiling 1 process(es) with damon_vaddr' /tmp/out || fail "damon_vaddr was not used"
# Most of the bytes in the hottest regions DAMON reports lie in the workload's hot set. Not an
# absolute hotness: on a shared CPU the workload touches its pages less often per DAMON sample,
# and every reading drops. Not the single hottest region either: DAMON's regions do not end on the
# workload's 2 MiB regions, so a sliver beside the hot set may read hot too.
base=$(sed 's/.*"base":\([0-9]*\).*/\1/' /tmp/truth)
size=$(sed 's/.*"region_bytes":\([0-9]*\).*/\1/' /tmp/truth)
hot=$(sed 's/.*"hot":\[\([0-9,]*\)\].*/,\1,/' /tmp/truth)
awk '/^hottest regions:/ { listed = 1; getline; next } listed && $2 ~ /^0x/ && $5 != "0.0" { print $2, $3 }' /tmp/out > /tmp/hottest
[ -s /tmp/hottest ] || fail "DAMON saw no access at all"
in_hot=0
total=0
while read -r from to; do
  from=$((from))
  to=$((to))
  total=$((total + to - from))
  k=$(( (from - base) / size ))
  while [ $((base + k * size)) -lt $to ]; do
    lo=$((base + k * size))
    hi=$((lo + size))
    [ $lo -lt $from ] && lo=$from
    [ $hi -gt $to ] && hi=$to
    case "$hot" in *,$k,*) in_hot=$((in_hot + hi - lo)) ;; esac
    k=$((k + 1))
  done
done < /tmp/hottest
echo "hottest regions: $((in_hot >> 10)) of $((total >> 10)) KiB in the hot set"
[ $((in_hot * 2)) -gt $total ] || fail "the hottest regions lie mostly outside the hot set $hot"
[ "$(cat /sys/kernel/mm/damon/admin/kdamonds/nr_kdamonds)" = "0" ] || fail "a kdamond was left behind"
mtmctl heatmap /tmp/d.jsonl -o /tmp/d.svg || fail "heatmap"
kill $w
echo "PASS damon-source"
