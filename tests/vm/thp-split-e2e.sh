#!/bin/sh
# Runs inside a 4-node VM-lab guest: the kernel side of the policy's THP split and collapse, on a
# process that never stops writing. In THP 1 of a THP-backed writer, its first quarter moves to
# node 2 with --split-thp (the THP is split, only those 128 pages move, the rest stays on node 0),
# then the rest follows, then mtmctl collapse re-forms the THP on node 2. THP 2, covered only in
# part without --split-thp, moves whole. At the end the writer checks every byte.
set -u
. /bin/writer-lib.sh
anon() { awk '/^AnonHugePages/ { print $2 }' /proc/$pid/smaps_rollup; }
hex() { printf '%#x' "$1"; }
placement() {  # START END: "node:base_bytes:thp_bytes" per node, space-separated
  mtmctl placement --pid "$pid" --range "$(hex "$1")-$(hex "$2")" -f csv > /tmp/p.csv || fail "placement: $(cat /tmp/p.csv)"
  tail -n +2 /tmp/p.csv | awk -F, '{ printf "%s%s:%s:%s", (NR > 1 ? " " : ""), $1, $3, $4 }'
}
migrate() {  # START END NODE [--split-thp]
  mtmctl migrate --pid "$pid" --range "$(hex "$1")-$(hex "$2")" --to "$3" ${4:-} -f json > /tmp/m.json ||
    fail "mtmctl migrate to node $3: $(cat /tmp/m.json)"
  cat /tmp/m.json
}

start_writer --size 16M --thp-fraction 1
thp=$(echo "$line" | sed 's/.* thp=\([^ ]*\).*/\1/')
first=$((${thp%-*}))
thp1=$((first + 2097152)) thp2=$((first + 4194304))
quarter=$((thp1 + 524288)) end1=$((thp1 + 2097152))
before=$(anon)
echo "writer pid=$pid thp=$thp AnonHugePages=${before}kB"
[ "$before" -ge 8192 ] || fail "the writer got only ${before} kB of THPs"
[ "$(placement $thp1 $end1)" = "0:0:2097152" ] || fail "THP 1 is not one THP on node 0: $(placement $thp1 $end1)"

migrate $thp1 $quarter 2 --split-thp
[ "$(field pages_moved /tmp/m.json)" -eq 128 ] || fail "moved $(field pages_moved /tmp/m.json) pages, expected 128"
[ "$(field thp_split /tmp/m.json)" -eq 1 ] || fail "thp_split $(field thp_split /tmp/m.json), expected 1"
[ "$(anon)" -eq $((before - 2048)) ] || fail "AnonHugePages $(anon) kB, expected $((before - 2048)) (one THP split)"
got=$(placement $thp1 $end1)
echo "after the split: $got"
[ "$got" = "0:1572864:0 2:524288:0" ] || fail "after the split THP 1 is $got, expected 1.5 MiB on node 0 and 512 KiB on node 2"

migrate $quarter $end1 2 --split-thp
[ "$(field pages_moved /tmp/m.json)" -eq 384 ] || fail "moved $(field pages_moved /tmp/m.json) pages, expected 384"
[ "$(placement $thp1 $end1)" = "2:2097152:0" ] || fail "THP 1's pages are not all on node 2: $(placement $thp1 $end1)"

mtmctl collapse --pid "$pid" --range "$(hex $thp1)-$(hex $end1)" --format json > /tmp/c.txt || fail "collapse: $(cat /tmp/c.txt)"
cat /tmp/c.txt
grep -q "\"thps_formed\":1}" /tmp/c.txt || fail "collapse formed no THP: $(cat /tmp/c.txt)"
[ "$(anon)" -eq "$before" ] || fail "AnonHugePages $(anon) kB after the collapse, expected $before"
got=$(placement $thp1 $end1)
echo "after the collapse: $got"
[ "$got" = "2:0:2097152" ] || fail "after the collapse THP 1 is $got, expected one THP on node 2"

migrate $((thp2 + 1048576)) $((thp2 + 1572864)) 3
[ "$(field thp_moved_whole /tmp/m.json)" -eq 1 ] || fail "THP 2 covered in part did not move whole"
[ "$(placement $thp2 $((thp2 + 2097152)))" = "3:0:2097152" ] || fail "THP 2 is not whole on node 3: $(placement $thp2 $((thp2 + 2097152)))"
[ "$(anon)" -eq "$before" ] || fail "AnonHugePages $(anon) kB, expected $before (THP 2 split)"

stop_writer
echo "PASS thp-split-e2e"
