# Sourced by the VM-lab scripts that move a running mtm-test-writer's pages (added to the guest as
# /bin/writer-lib.sh): starting the writer, reading mtmctl's JSON, and the writer's final check.
fail() { echo "FAIL: $*"; exit 1; }
field() { sed -n "s/.*\"$1\":\([0-9.e+-]*\).*/\1/p" "$2"; }

# start_writer WRITER-ARGS...: runs the writer, waits for its ready line; sets writer (its pid as
# the shell's child), pid and line (the ready line: pid=... thp=START-END base=... hugetlb=...).
start_writer() {
  mtm-test-writer "$@" --ready /tmp/ready > /tmp/writer.log 2>&1 &
  writer=$!
  i=0
  while [ ! -s /tmp/ready ]; do
    i=$((i + 1)); [ $i -gt 600 ] && fail "writer not ready"; sleep 0.1
  done
  read -r line < /tmp/ready
  pid=$(echo "$line" | sed 's/pid=\([0-9]*\).*/\1/')
}

# stop_writer: stops it; it checks every byte it wrote on the way out.
stop_writer() {
  kill -TERM "$writer"
  wait "$writer"
  rc=$?
  cat /tmp/writer.log
  [ $rc -eq 0 ] || fail "the writer found corrupted data"
}
