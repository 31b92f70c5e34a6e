#!/bin/sh
# Runs inside a 4-node VM-lab guest whose node 0 (the top tier) has room for two of a workload's
# three 64 MiB hot sets. The sets take turns, A B C A B C A B C, 15 s each, the workload's memory
# starting in the slowest tier; mtmd manages it with predictive placement on. Reactive placement
# moves a set up only once it is hot; prediction learns the cycle in the first and must move each
# set up ahead of its phase: every phase of the third cycle begins with at least 0.9 of its hot
# set in the top tier (the watch's start_top: move_pages(2) queries against the workload's truth,
# within 1 s of the phase's start). Every page is verified at the end; mtmctl status counts the
# hits; another user's hint for the workload is refused.
set -u
. /bin/writer-lib.sh
fail() { echo "FAIL: $*"; echo "--- mtmd log"; tail -40 /tmp/mtmd.log; exit 1; }
config=/etc/mtm/mtm.yaml

start_mtmd "$config"
mtmctl -c "$config" run -- mtm-test-hotset --size 320M --hot-fraction 0.2 --pattern cyclic --cycle 3 --start-node 3 \
  --phases 9 --phase-seconds 15 --truth /tmp/truth.jsonl --ready /tmp/ready > /tmp/run.log 2>&1 &
run=$!
wait_ready /tmp/ready
# In the third cycle: what mtmd says of its predictions, and a hint from a user who does not own
# the workload.
( sleep 110
  mtmctl -c "$config" status > /tmp/status.txt 2>&1
  /usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups mtmctl -c "$config" hint phase "$pid" 1 > /tmp/hint.txt 2>&1
  echo "rc=$?" >> /tmp/hint.txt ) &
probe=$!
mtm-placement-watch --pid "$pid" --truth /tmp/truth.jsonl --size 320M --period 1 --label predict > /tmp/watch.log 2>&1
wait $run
rc=$?
wait $probe
cat /tmp/run.log /tmp/watch.log /tmp/status.txt /tmp/hint.txt
[ $rc -eq 0 ] || fail "mtmctl run exited $rc"
grep -q "wrong_pages=0 " /tmp/run.log || fail "the workload found corrupted pages"
# The watch's table, its columns read by name from its header row.
bad=$(awk '$2 == "phase" && $3 == "reaction" { for (i = 2; i <= NF; i++) col[$i] = i - 1; next }
     ("phase" in col) && $1 ~ /^[0-9]+$/ {
       n++
       start = $col["start_top"]
       if ($1 >= 6 && start < 0.9) { print "phase " $1 " began with only " start " of its hot set in the top tier"; bad = 1 }
     }
     END { if (n != 9) { print "expected 9 phases, saw " n; bad = 1 } exit bad }' /tmp/watch.log) ||
  fail "prediction:" $bad
hits=$(sed -n 's/^prediction: .* \([0-9]*\) hit(s).*/\1/p' /tmp/status.txt)
[ "${hits:-0}" -gt 0 ] || fail "mtmctl status counts no prediction hit: $(grep prediction /tmp/status.txt)"
grep -q "^rc=0" /tmp/hint.txt && fail "uid 65534 hinted root's workload: $(cat /tmp/hint.txt)"
grep -q "permission denied" /tmp/hint.txt || fail "a foreign hint refused without a reason: $(cat /tmp/hint.txt)"
kill -TERM $mtmd_pid
wait $mtmd_pid
echo "PASS predict-e2e"
