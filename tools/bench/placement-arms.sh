#!/bin/sh
# Runs inside a VM-lab guest (tools/bench-placement): the same mtm-test-hotset workload three
# times, its memory starting in the slowest tier, placed by (1) mtm (mtmctl run, the embedded
# default config; arm "predict": the same with policy.predict.mode on), (2) the kernel's own tiering (numa_balancing=2 with demotion_enabled), and
# (3) DAMON-based tiering (DAMOS migrate_hot to node 0, migrate_cold to node 1; Linux 6.12
# supports these actions on physical addresses only, so DAMON monitors all of memory, where the
# workload is nearly the only user), each measured
# from outside by mtm-placement-watch. Writes /out/placement-<arm>.txt and a comparison. mtm
# records its profile, and its hot bytes are scored against the truth after its run.
#   placement-arms SIZE HOT_FRACTION PHASES PHASE_SECONDS [PATTERN [TRICKLE [ARMS [MTMCTL_FLAGS [CYCLE [JITTER [PERIOD]]]]]]]
set -u
size=$1 frac=$2 phases=$3 secs=$4 pattern=${5:-sliding} trickle=${6:-0} arms=${7:-mtm,kernel,damos} mtmflags=${8:-}
cycle=${9:-3} jitter=${10:-0} period=${11:-1}
wants() { case ",$arms," in *",$1,"*) return 0 ;; *) return 1 ;; esac; }
workload="mtm-test-hotset --size $size --hot-fraction $frac --pattern $pattern --cycle $cycle --jitter $jitter --trickle $trickle --start-node 3 --phases $phases --phase-seconds $secs --truth /tmp/truth.jsonl --ready /tmp/ready"

run_arm() {  # name, then the command that starts the workload
  name=$1; shift
  rm -f /tmp/ready /tmp/truth.jsonl
  "$@" > /tmp/$name.log 2>&1 &
  starter=$!
  i=0
  while [ ! -s /tmp/ready ]; do i=$((i + 1)); [ $i -gt 600 ] && { echo "$name: workload not ready"; cat /tmp/$name.log; exit 1; }; sleep 0.1; done
  pid=$(sed 's/pid=\([0-9]*\).*/\1/' /tmp/ready)
  [ "$name" = damos ] && damos_start
  mtm-placement-watch --pid "$pid" --truth /tmp/truth.jsonl --size "$size" --period "$period" --label "$name" \
    --json "/out/placement-$name.json" > "/out/placement-$name.txt" 2>&1
  wait $starter
  [ "$name" = damos ] && damos_stop
  grep -q "wrong_pages=0 " /tmp/$name.log || { echo "$name: the workload found corrupted pages"; cat /tmp/$name.log; exit 1; }
  grep -A20 "reaction  start_top" "/out/placement-$name.txt"
}

d=/sys/kernel/mm/damon/admin
damos_start() {
  echo 1 > $d/kdamonds/nr_kdamonds
  k=$d/kdamonds/0
  echo 1 > $k/contexts/nr_contexts
  c=$k/contexts/0
  echo paddr > $c/operations
  # 20 ms sampling, 200 ms aggregation: the cost mtm-bench-profile found comparable to mtm's.
  echo 20000 > $c/monitoring_attrs/intervals/sample_us
  echo 200000 > $c/monitoring_attrs/intervals/aggr_us
  echo 1000000 > $c/monitoring_attrs/intervals/update_us
  # The biggest System RAM block of /proc/iomem (6.12 monitors nothing without a region).
  best=0
  for range in $(sed -n 's/^ *\([0-9a-f]*\)-\([0-9a-f]*\) : System RAM$/\1-\2/p' /proc/iomem); do
    lo=$((0x${range%-*})) hi=$((0x${range#*-} + 1))
    [ $((hi - lo)) -gt $best ] && best=$((hi - lo)) start=$lo end=$hi
  done
  echo 1 > $c/targets/nr_targets
  echo 1 > $c/targets/0/regions/nr_regions
  echo $start > $c/targets/0/regions/0/start
  echo $end > $c/targets/0/regions/0/end
  echo 2 > $c/schemes/nr_schemes
  for s in 0 1; do
    p=$c/schemes/$s
    echo 0 > $p/access_pattern/sz/min; echo 18446744073709551615 > $p/access_pattern/sz/max
    echo 1000 > $p/quotas/reset_interval_ms
    echo $((256 << 20)) > $p/quotas/bytes
  done
  # Hot: accessed in at least 3 of the 10 samples of an aggregation -> node 0.
  echo migrate_hot > $c/schemes/0/action; echo 0 > $c/schemes/0/target_nid
  echo 3 > $c/schemes/0/access_pattern/nr_accesses/min; echo 10 > $c/schemes/0/access_pattern/nr_accesses/max
  echo 0 > $c/schemes/0/access_pattern/age/min; echo 4294967295 > $c/schemes/0/access_pattern/age/max
  # Cold: not accessed for 5 aggregations (1 s) -> node 1.
  echo migrate_cold > $c/schemes/1/action; echo 1 > $c/schemes/1/target_nid
  echo 0 > $c/schemes/1/access_pattern/nr_accesses/min; echo 0 > $c/schemes/1/access_pattern/nr_accesses/max
  echo 5 > $c/schemes/1/access_pattern/age/min; echo 4294967295 > $c/schemes/1/access_pattern/age/max
  echo on > $k/state || { echo "damos: kdamond did not start"; exit 1; }
}
damos_stop() {
  echo off > $d/kdamonds/0/state 2>/dev/null
  echo 0 > $d/kdamonds/nr_kdamonds
}

cfg="" scorecfg=""
[ -f /etc/mtm/bench.yaml ] && cfg="-c /etc/mtm/bench.yaml" scorecfg="--config /etc/mtm/bench.yaml"
mtm_arm() {  # name, then mtmctl's config options
  name=$1; shift
  # Not -q: mtmctl run's closing lines (the profiler's load, prediction's figures) are read from its log.
  run_arm $name mtmctl $mtmflags "$@" run --embedded --record /tmp/$name-profile.jsonl -- $workload
  cp /tmp/$name.log /out/placement-$name.log
  mtm-placement-watch --pid "$pid" --truth /tmp/truth.jsonl --size "$size" --score-record /tmp/$name-profile.jsonl $scorecfg \
    | tee -a /out/placement-$name.txt
  cp /tmp/$name-profile.jsonl /out/placement-$name-profile.jsonl
}
if wants mtm; then
  echo "# mtm (mtmctl run, ${cfg:-embedded default config})"
  mtm_arm mtm $cfg
fi
if wants predict; then
  # The same config with predictive placement on (policy.predict.mode).
  mtmctl $cfg config show | sed 's/^    mode: off$/    mode: on/' > /tmp/predict.yaml
  grep -q '^    mode: on$' /tmp/predict.yaml || { echo "predict: no policy.predict.mode in the config"; exit 1; }
  echo "# mtm, predictive (policy.predict.mode on, otherwise ${cfg:-the embedded default config})"
  mtm_arm predict -c /tmp/predict.yaml
fi
# Settings of the kernel arm from tools/bench-placement --kernel-knobs: "path value" lines.
knobs=/etc/mtm/kernel-knobs.txt
set_knobs() {  # save: write each knob, keeping its old value in /tmp/knobs.old; restore: put those back
  if [ "$1" = save ]; then
    : > /tmp/knobs.old
    [ -f $knobs ] || return 0
    grep -v '^#' $knobs | while read -r path value; do
      [ -n "$path" ] || continue
      [ -w "$path" ] || { echo "kernel knob $path: not writable in this guest"; exit 1; }
      echo "$path $(cat "$path")" >> /tmp/knobs.old
      echo "$value" > "$path"
      echo "# kernel knob $path = $value"
    done
  else
    while read -r path value; do echo "$value" > "$path"; done < /tmp/knobs.old
  fi
}
if wants kernel; then
  echo "# kernel tiering (numa_balancing=2, demotion_enabled=1)"
  set_knobs save || exit 1
  echo 2 > /proc/sys/kernel/numa_balancing
  echo 1 > /sys/kernel/mm/numa/demotion_enabled
  run_arm kernel $workload
  echo 0 > /proc/sys/kernel/numa_balancing
  echo 0 > /sys/kernel/mm/numa/demotion_enabled
  set_knobs restore
fi
if wants damos; then
  echo "# DAMON-based tiering (DAMOS migrate_hot -> node 0, migrate_cold -> node 1)"
  run_arm damos $workload
fi
