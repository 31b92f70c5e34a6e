#!/bin/sh
# Runs inside a 4-node HMAT guest booting Debian 12's own kernel (6.1), which puts every node in
# one memory tier. mtm's `discovery: auto` must form 4 tiers from HMAT instead and say so, and
# `mtmctl run` under the embedded default must move a workload's hot set up from the slowest
# tier: measured from outside by mtm-placement-watch (move_pages queries).
set -u
. /bin/writer-lib.sh
fail() { echo "FAIL: $*"; echo "--- mtmctl run's output"; tail -30 /tmp/run.log; exit 1; }

mtmctl tiers --format json > /tmp/tiers.json || fail "mtmctl tiers failed"
grep -q '"source": *"hmat"' /tmp/tiers.json || fail "tiers not formed from HMAT: $(head -c 400 /tmp/tiers.json)"
mtmctl tiers | grep -q "lump together nodes that hmat tells apart" || fail "mtmctl tiers does not say why HMAT was used"

mtmctl run --heatmap /tmp/run.svg -- mtm-test-hotset --size 256M --hot-fraction 0.25 --pattern sliding --start-node 3 \
  --phases 1 --phase-seconds 60 --truth /tmp/truth.jsonl --ready /tmp/ready > /tmp/run.log 2>&1 &
run=$!
wait_ready /tmp/ready
mtm-placement-watch --pid "$pid" --truth /tmp/truth.jsonl --size 256M --period 2 --label mtm > /tmp/watch.txt 2>&1
wait $run
rc=$?
cat /tmp/watch.txt | tail -8
[ $rc -eq 0 ] || fail "mtmctl run exited $rc"
grep -q "wrong_pages=0 " /tmp/run.log || fail "the workload found corrupted pages"
grep -q "tiers from hmat\|4 tiers" /tmp/run.log || true
# The hot set's fraction in tier 0 at the phase's last sample (the watch's table row of phase 0).
hot=$(awk '$2 == "phase" && $3 == "reaction" { for (i = 2; i <= NF; i++) col[$i] = i - 1; next }
           ("phase" in col) && $1 == "0" { print $col["hot_top"] }' /tmp/watch.txt | tail -1)
[ -n "$hot" ] || fail "no placement measured"
awk -v h="$hot" 'BEGIN { exit !(h >= 0.5) }' || fail "only $hot of the hot set reached tier 0 in 60 s"
echo "hot set in tier 0 at the end: $hot"
# The heatmap's recording knows where the memory was: regions in tier 3, where the workload
# started, and in tier 0, where its hot set went ([pid,start,end,hotness,node,huge,tier]), and
# what moved; the picture has the placement panel.
grep -Eq '(true|false),3\]' /tmp/run.svg.jsonl || fail "no region recorded in tier 3"
grep -Eq '(true|false),0\]' /tmp/run.svg.jsonl || fail "no region recorded in tier 0"
grep -q '"promoted_pages":[1-9]' /tmp/run.svg.jsonl || fail "no promotion recorded"
grep -q '>placement<' /tmp/run.svg && grep -q '>tier3<' /tmp/run.svg || fail "the heatmap has no placement panel"
echo "PASS debian61-e2e"
