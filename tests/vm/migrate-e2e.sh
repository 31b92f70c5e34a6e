#!/bin/sh
# Runs inside a 4-node VM-lab guest. A writer keeps rewriting a known pattern into 256 MiB (half
# THP-backed) plus 16 MiB of hugetlb pages while mtmctl moves it node 0 -> 2 -> 3 -> 0 under a
# 128 MiB/s budget. After each move every resident page must be on the destination, THPs and
# hugetlb pages must have moved whole, and the achieved rate must not exceed the budget; at the
# end the writer checks every byte.
set -u
. /bin/writer-lib.sh
vmstat() { awk -v k="$1" '$1 == k { print $2 }' /proc/vmstat; }

# hugetlb pages for the writer on node 0, and room for them to move to on the others.
for n in 0 1 2 3; do echo 8 > /sys/devices/system/node/node$n/hugepages/hugepages-2048kB/nr_hugepages; done
start_writer --size 256M --thp-fraction 0.5 --hugetlb 16M
thp=$(echo "$line" | sed 's/.* thp=\([^ ]*\).*/\1/')
base=$(echo "$line" | sed 's/.* base=\([^ ]*\).*/\1/')
hugetlb=$(echo "$line" | sed 's/.* hugetlb=\([^ ]*\).*/\1/')
anon_before=$(awk '/^AnonHugePages/ { print $2 }' /proc/$pid/smaps_rollup)
thps=$((anon_before / 2048))
echo "writer pid=$pid thp=$thp base=$base AnonHugePages=${anon_before}kB thps=$thps"
[ "$thps" -ge 32 ] || fail "the writer got only $thps THPs"

for node in 2 3 0; do
  succ_before=$(vmstat thp_migration_success)
  mtmctl migrate --pid "$pid" --range "$thp" --range "$base" --range "$hugetlb" --to "$node" --rate 128MiB/s -f json > /tmp/m.json ||
    fail "mtmctl migrate to node $node: $(cat /tmp/m.json)"
  moved=$(field pages_moved /tmp/m.json)
  whole=$(field thp_moved_whole /tmp/m.json)
  hmoved=$(field hugetlb_moved /tmp/m.json)
  rate=$(field bytes_per_second /tmp/m.json)
  secs=$(field seconds /tmp/m.json)
  succ_after=$(vmstat thp_migration_success)
  echo "to node $node: pages_moved=$moved thp_moved_whole=$whole hugetlb_moved=$hmoved seconds=$secs rate=$rate thp_migration_success+$((succ_after - succ_before))"
  [ "$moved" -eq 69632 ] || fail "moved $moved of 69632 pages to node $node"
  [ "$hmoved" -eq 8 ] || fail "$hmoved hugetlb pages moved, expected 8"
  [ "$whole" -eq "$thps" ] || fail "$whole THPs moved whole, expected $thps"
  [ $((succ_after - succ_before)) -ge "$thps" ] || fail "thp_migration_success rose by $((succ_after - succ_before)), expected $thps"
  # The budget: 128 MiB/s, plus the 100 ms burst the pacer allows.
  awk -v r="$rate" -v s="$secs" 'BEGIN { exit !(r <= 134217728 * (1 + 0.1 / s) * 1.01) }' ||
    fail "achieved $rate B/s over a 128 MiB/s budget"
  mtmctl placement --pid "$pid" --range "$thp" --range "$base" --range "$hugetlb" -f csv > /tmp/p.csv || fail "placement"
  rows=$(tail -n +2 /tmp/p.csv | wc -l)
  where=$(tail -n +2 /tmp/p.csv | cut -d, -f1)
  total=$(tail -n +2 /tmp/p.csv | cut -d, -f6)
  htotal=$(tail -n +2 /tmp/p.csv | cut -d, -f5)
  [ "$rows" -eq 1 ] && [ "$where" = "$node" ] || fail "placement after moving to $node: $(cat /tmp/p.csv)"
  [ "$total" -eq 285212672 ] || fail "placement counts $total bytes, expected 285212672"
  [ "$htotal" -eq 16777216 ] || fail "placement counts $htotal hugetlb bytes, expected 16777216"
  anon=$(awk '/^AnonHugePages/ { print $2 }' /proc/$pid/smaps_rollup)
  [ "$anon" -eq "$anon_before" ] || fail "AnonHugePages changed: $anon_before kB -> $anon kB (a THP was split)"
done

stop_writer
echo "PASS migrate-e2e"
