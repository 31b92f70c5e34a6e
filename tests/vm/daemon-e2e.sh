#!/bin/sh
# Runs inside a 4-node VM-lab guest whose node 0 (the top tier) is smaller than the workload.
# mtmd manages a workload started with `mtmctl run`, whose 128 MiB hot set jumps to a new,
# disjoint place every phase; the workload's memory starts in the slowest tier. After each phase
# change the new hot set must reach the top tier (in phase 0 straight from tier 3) and the old
# one must leave it for the next lower tier with room -- not the slowest, which always has room;
# every page is verified at the end. mtmd runs with the systemd unit's capabilities only. Then
# the daemon must survive the workload exiting, a SIGHUP with a broken config and kill -9
# followed by a restart, and refuse another user's process.
set -u
. /bin/writer-lib.sh
fail() { echo "FAIL: $*"; echo "--- mtmd log"; tail -40 /tmp/mtmd.log; exit 1; }
config=/etc/mtm/mtm.yaml

start_mtmd "$config"
echo "mtmd pid=$mtmd_pid $(grep CapEff /proc/$mtmd_pid/status)"
grep -q "source=ebpf_abit available=yes" /tmp/mtmd.log || fail "the BPF source did not load with the unit's capabilities"

mtmctl -c "$config" run -- mtm-test-hotset --size 512M --hot-fraction 0.25 --pattern sliding --start-node 3 \
  --phases 4 --phase-seconds 25 --truth /tmp/truth.jsonl --ready /tmp/ready > /tmp/run.log 2>&1 &
run=$!
wait_ready /tmp/ready
mtmctl -c "$config" status | grep -q "^$pid " || fail "pid $pid is not in mtmctl status"
# Pages move on mtmd's move worker: its socket answers while they move (phase 0 moves the
# whole hot set up from tier 3).
( for i in $(seq 1 200); do
    mtmctl -c "$config" status -f json 2>/dev/null | grep -Eq '"moves_in_flight": ?true' && { echo yes > /tmp/inflight; exit; }
    sleep 0.1
  done ) &
# Metrics while pages move (from phase 1 on): two scrapes of mtmd's /metrics with the same
# per-process lines around one `mtmctl status -f json` must agree with it.
( sleep 30
  for i in $(seq 1 60); do
    if wget -q -O /tmp/m1 http://127.0.0.1:9477/metrics && mtmctl -c "$config" status -f json > /tmp/mstatus.json &&
       wget -q -O /tmp/m2 http://127.0.0.1:9477/metrics; then
      grep '^mtm_target_' /tmp/m1 > /tmp/m1.t
      grep '^mtm_target_' /tmp/m2 > /tmp/m2.t
      cmp -s /tmp/m1.t /tmp/m2.t && { cp /tmp/m1 /tmp/metrics.txt; exit; }
    fi
    sleep 0.3
  done ) &
mtm-placement-watch --pid "$pid" --truth /tmp/truth.jsonl --size 512M --period 1 --label mtm > /tmp/watch.log 2>&1
wait $run
rc=$?
cat /tmp/run.log /tmp/watch.log
[ $rc -eq 0 ] || fail "mtmctl run exited $rc"
grep -q "wrong_pages=0 " /tmp/run.log || fail "the workload found corrupted pages"
[ -f /tmp/inflight ] || fail "mtmctl status never answered while pages were moving (moves_in_flight)"
[ -f /tmp/metrics.txt ] || fail "no two matching scrapes of http://127.0.0.1:9477/metrics while the workload ran: $(tail -3 /tmp/m1 2>&1)"
# The workload's series: bytes per tier, pages moved; status's JSON numbers for the same.
metric() { grep "^$1{" /tmp/metrics.txt | grep "pid=\"$pid\"" | grep -- "$2" | awk '{ print $2 }'; }
status_field() { tr ',{}' '\n\n\n' < /tmp/mstatus.json | grep "\"$1\":" | head -1 | sed 's/.*: *//'; }
for t in tier0 tier1 tier2 tier3; do
  [ "$(metric mtm_target_bytes "tier=\"$t\"")" = "$(status_field ${t}_bytes)" ] ||
    fail "$t: metrics say $(metric mtm_target_bytes "tier=\"$t\"") bytes, mtmctl status $(status_field ${t}_bytes)"
done
for f in promoted demoted; do
  [ "$(metric mtm_target_${f}_pages_total '')" = "$(status_field ${f}_pages)" ] ||
    fail "$f: metrics say $(metric mtm_target_${f}_pages_total '') pages, mtmctl status $(status_field ${f}_pages)"
done
[ "$(metric mtm_target_promoted_pages_total '')" -gt 0 ] || fail "no promotion in the metrics by phase 1"
placed=$(grep "^mtm_target_bytes{" /tmp/metrics.txt | grep "pid=\"$pid\"" | awk '{ s += $2 } END { printf "%d", s }')
[ "$placed" -gt $((256 << 20)) ] || fail "the metrics place only $placed bytes of the 512 MiB workload in tiers"
# move_pages(2) counts in the kernel's own migration counter.
awk '/^mtm_kernel_vmstat_total\{counter="pgmigrate_success"\}/ { ok = $2 > 0 } END { exit !ok }' /tmp/metrics.txt ||
  fail "pgmigrate_success not above 0 in the metrics"
echo "metrics agree with mtmctl status: $(grep -c '^mtm_' /tmp/metrics.txt) series; the workload's:"
grep "pid=\"$pid\"" /tmp/metrics.txt
# Per phase (the watch's table, its columns read by name from its header row): hot_top >= 0.8;
# from phase 1 on, at most half the old hot set still in the top tier and little of it in the
# slowest tier (demotion goes one tier down while there is room).
bad=$(awk '$2 == "phase" && $3 == "reaction" { for (i = 2; i <= NF; i++) col[$i] = i - 1; next }
     ("phase" in col) && $1 ~ /^[0-9]+$/ {
       n++
       hot = $col["hot_top"]; old = $col["old_top"]; bottom = $col["old_bottom"]
       if (hot < 0.8) { print "phase " $1 ": only " hot " of the hot set in the top tier"; bad = 1 }
       if ($1 > 0 && old > 0.5) { print "phase " $1 ": " old " of the old hot set still in the top tier"; bad = 1 }
       if ($1 > 0 && bottom > 0.2) { print "phase " $1 ": " bottom " of the old hot set went to the slowest tier"; bad = 1 }
     }
     END { if (n != 4) { print "expected 4 phases, saw " n; bad = 1 } exit bad }' /tmp/watch.log) ||
  fail "placement:" $bad
mtmctl -c "$config" status > /tmp/status.txt || fail "mtmd gone after the workload exited"
grep -q "no managed processes" /tmp/status.txt || fail "the exited workload is still listed: $(cat /tmp/status.txt)"
grep -q "promoted_in" /tmp/status.txt || fail "status without tier stats"

# Another user's process is refused; the owner's own is accepted.
sleep 600 &
rootsleep=$!
if /usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups mtmctl -c "$config" attach $rootsleep > /tmp/attach.txt 2>&1; then
  fail "uid 65534 attached root's process: $(cat /tmp/attach.txt)"
fi
grep -q "permission denied" /tmp/attach.txt || fail "refusal without a reason: $(cat /tmp/attach.txt)"
/usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups sleep 600 &
usersleep=$!
sleep 0.2
/usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups mtmctl -c "$config" attach $usersleep || fail "the owner could not attach its own process"
/usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups mtmctl -c "$config" status | grep -q "^$usersleep " || fail "owner's status"
/usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups mtmctl -c "$config" detach $usersleep || fail "the owner could not detach"
kill $rootsleep $usersleep

# A broken config on SIGHUP: the daemon keeps the old one and keeps answering.
cp "$config" /tmp/good.yaml
echo "policy: {name: nonsense" > "$config"
kill -HUP $mtmd_pid
sleep 1
mtmctl -c /tmp/good.yaml status > /dev/null || fail "mtmd stopped answering after a broken SIGHUP"
grep -q "reload failed: keeping the previous config" /tmp/mtmd.log || fail "no 'reload failed' in the log"
cp /tmp/good.yaml "$config"

# kill -9, then a restart: the lock and the socket are taken over.
kill -9 $mtmd_pid
wait $mtmd_pid 2>/dev/null
start_mtmd "$config"
mtmctl -c "$config" status > /dev/null || fail "restart after kill -9"
kill -TERM $mtmd_pid
wait $mtmd_pid
echo "PASS daemon-e2e"
