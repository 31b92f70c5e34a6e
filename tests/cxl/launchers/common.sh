# Shared by the launcher tests: a scratch directory and pool, skips, and the checks of
# cxlccl-test-launched's "PASS rank=R nranks=N calls=C start=T0 end=T1" lines.

skip() {
  echo "SKIP: $*"
  exit 77
}

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

scratch=$(mktemp -d /tmp/cxlccl-launcher.XXXXXX)
export CXLCCL_POOL=/dev/shm/${scratch##*/}.pool
cleanup_scratch() {
  rm -rf "$scratch"
  rm -f "$CXLCCL_POOL"
}
trap cleanup_scratch EXIT

# A TCP port on 127.0.0.1 that nothing listens on.
free_port() {
  local port
  for port in $(shuf -i 20000-60000 -n 20); do
    ! (exec 3<> "/dev/tcp/127.0.0.1/$port") 2> /dev/null && { echo "$port"; return; }
  done
  fail "no free TCP port on 127.0.0.1"
}

# check_job OUT N: every one of the job's N ranks passed, in a communicator of N ranks (a
# launcher may prefix the lines, as torchrun's --tee does: "[default0]:PASS ...").
check_job() {
  local out=$1 n=$2 got
  got=$(grep -c "PASS rank=[0-9]* nranks=$n " "$out" || true)
  [ "$got" -eq "$n" ] || {
    cat "$out" >&2
    fail "$out: $got of $n ranks passed in a communicator of $n"
  }
  echo "job $(basename "$out" .out): $n ranks passed ($(grep -o 'calls=[0-9]*' "$out" | head -1))"
}

# check_overlap A B: the two jobs ran at the same time (each started before the other ended).
check_overlap() {
  awk '{ for (i = 1; i <= NF; ++i) { split($i, kv, "=");
           if (kv[1] == "start" && kv[2] > latest) latest = kv[2];
           if (kv[1] == "end" && (earliest == "" || kv[2] < earliest)) earliest = kv[2]; } }
       END { printf "jobs overlapped for %.2f s\n", earliest - latest; exit !(latest < earliest) }' "$1" "$2" ||
    fail "the two jobs did not run at the same time: the test proves nothing (see $1, $2)"
}

# one_then_two_jobs NAME COMMAND...: a job of 2 ranks, then two at once, whose job ids must keep
# their pool regions apart (a rank of one job in the other's communicator would fail both).
one_then_two_jobs() {
  local name=$1 first second
  shift
  "$@" --seconds 0.5 > "$scratch/one.out" || { cat "$scratch/one.out" >&2; fail "a job started by $name failed"; }
  check_job "$scratch/one.out" 2
  # Each job its own TMPDIR: two Open MPI launchers that create their session directory
  # (TMPDIR/ompi.HOST.UID) at the same moment race, and one fails in orte_init with "mkdir:
  # File exists" (seen once in CI's ASan pass).
  mkdir -p "$scratch/tmp-a" "$scratch/tmp-b"
  TMPDIR=$scratch/tmp-a "$@" --seconds 3 > "$scratch/a.out" &
  first=$!
  TMPDIR=$scratch/tmp-b "$@" --seconds 3 > "$scratch/b.out" &
  second=$!
  wait $first || { cat "$scratch/a.out" >&2; fail "the first of two concurrent $name jobs failed"; }
  wait $second || { cat "$scratch/b.out" >&2; fail "the second of two concurrent $name jobs failed"; }
  check_job "$scratch/a.out" 2
  check_job "$scratch/b.out" 2
  check_overlap "$scratch/a.out" "$scratch/b.out"
  echo "PASS: $name"
}

# Debian 12's torch 1.13 under Python 3.11 cannot parse torchrun's default "--redirects 0 --tee 0"
# (Std.from_str iterates an IntFlag, which in 3.11 skips the zero member) and every torchrun fails
# with "AttributeError: 'NoneType' object has no attribute 'get'". Any non-zero value avoids it:
# torchrun_streams DIR gives "stdout to DIR's logs and to the console", stderr to the console.
torchrun_streams() {
  echo --redirects 1 --tee 1 --log_dir "$1"
}
