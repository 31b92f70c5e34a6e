# Sourced by the VM-lab scripts (added to the guest as /bin/writer-lib.sh): waiting for a
# workload's ready line, starting the writer, reading mtmctl's JSON, the writer's final check, and
# starting mtmd as its systemd unit does.
# A script may define its own fail() after sourcing this.
fail() { echo "FAIL: $*"; exit 1; }
field() { sed -n "s/.*\"$1\":\([0-9.e+-]*\).*/\1/p" "$2"; }

# wait_ready FILE: waits up to 60 s for a workload's ready line in FILE (pid=... first); sets line
# and pid.
wait_ready() {
  i=0
  while [ ! -s "$1" ]; do
    i=$((i + 1)); [ $i -gt 600 ] && fail "workload not ready: no line in $1 after 60 s"; sleep 0.1
  done
  read -r line < "$1"
  pid=$(echo "$line" | sed 's/pid=\([0-9]*\).*/\1/')
}

# start_writer WRITER-ARGS...: runs the writer, waits for its ready line; sets writer (its pid as
# the shell's child), pid and line (the ready line: pid=... thp=START-END base=... hugetlb=...).
start_writer() {
  mtm-test-writer "$@" --ready /tmp/ready > /tmp/writer.log 2>&1 &
  writer=$!
  wait_ready /tmp/ready
}

# stop_writer: stops it; it checks every byte it wrote on the way out.
stop_writer() {
  kill -TERM "$writer"
  wait "$writer"
  rc=$?
  cat /tmp/writer.log
  [ $rc -eq 0 ] || fail "the writer found corrupted data"
}

# start_mtmd CONFIG: starts mtmd as mtmd.service runs it -- root with only the unit's capability
# bounding set -- logging to /tmp/mtmd.log (extra options in $MTMD_ARGS); waits until its socket
# answers; sets mtmd_pid.
start_mtmd() {
  /usr/bin/setpriv --no-new-privs --inh-caps=-all --bounding-set=-all,+sys_ptrace,+sys_nice,+bpf,+perfmon \
    mtmd --config "$1" ${MTMD_ARGS:-} >> /tmp/mtmd.log 2>&1 &
  mtmd_pid=$!
  i=0
  until mtmctl -c "$1" status > /dev/null 2>&1; do
    i=$((i + 1)); [ $i -gt 100 ] && fail "mtmd did not come up"; sleep 0.1
  done
}
