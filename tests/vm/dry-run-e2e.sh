#!/bin/sh
# Runs inside a 4-node VM-lab guest: `mtmctl run --dry-run` manages a workload whose memory starts
# in the slowest tier and whose hot set then moves. The policy must plan -- the log shows the
# promotions it would make -- and nothing may move: the kernel's migration counters stand still
# (the lab boots with numa_balancing off) and every page of the workload is still on node 3.
set -u
. /bin/writer-lib.sh
fail() { echo "FAIL: $*"; echo "--- mtmctl run's output"; tail -30 /tmp/run.log; exit 1; }
migrated() { awk '$1 == "pgmigrate_success" || $1 == "pgmigrate_fail" { n += $2 } END { print n + 0 }' /proc/vmstat; }

before=$(migrated)
mtmctl run --dry-run -- mtm-test-hotset --size 256M --hot-fraction 0.25 --pattern sliding --start-node 3 \
  --phases 2 --phase-seconds 10 --truth /tmp/truth.jsonl --ready /tmp/ready > /tmp/run.log 2>&1 &
run=$!
wait_ready /tmp/ready
sleep 15
# Where the workload's pages are, from the kernel's own account: N<node>=<pages> in numa_maps.
nodes=$(awk '{ for (i = 2; i <= NF; i++) if ($i ~ /^N[0-9]+=/) { split(substr($i, 2), kv, "="); n[kv[1]] += kv[2] } }
             END { for (k in n) printf "%s%s:%d", (s++ ? " " : ""), k, n[k] }' /proc/$pid/numa_maps)
echo "workload pid=$pid pages by node: $nodes"
wait $run
rc=$?
after=$(migrated)
grep "dry-run" /tmp/run.log | head -5
[ $rc -eq 0 ] || fail "mtmctl run exited $rc"
grep -q "wrong_pages=0 " /tmp/run.log || fail "the workload found corrupted pages"
grep -q "dry-run promote pid=$pid " /tmp/run.log || fail "no promotion was planned (no 'dry-run promote' line)"
[ "$after" -eq "$before" ] || fail "pages migrated in a dry run: pgmigrate_success + pgmigrate_fail $before -> $after"
# The 256 MiB the workload wrote are all still where they started (a few pages of its binary and
# libraries may lie elsewhere).
echo "$nodes" | tr ' ' '\n' | awk -F: '$1 == 3 { on3 = $2 } $1 != 3 { other += $2 }
  END { exit !(on3 >= 65536 && other < 1024) }' || fail "the workload's pages are not all on node 3: $nodes"
echo "PASS dry-run-e2e"
