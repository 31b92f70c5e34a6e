# tools/bench-placement --runs N: the N runs' outputs (one file a run, in run order) summed up.
# Reads each run's system table and, for a cyclic pattern, its table from the second cycle on;
# prints every figure as the mean over the runs with its range, a row a run for the figures that
# the runs' spread decides, and predictive mtm against reactive mtm run by run.
function add(key, v) {
  v += 0  # a number, not the text it was cut from: "10.41" < "6.17" as text
  n[key]++; sum[key] += v
  if (!(key in lo) || v < lo[key]) lo[key] = v
  if (!(key in hi) || v > hi[key]) hi[key] = v
}
function stat(key, fmt) {
  if (!(key in n)) return sprintf("%21s", "-")
  return sprintf("%21s", sprintf(fmt " [" fmt ".." fmt "]", sum[key] / n[key], lo[key], hi[key]))
}
function trim(text) { sub(/^ +/, "", text); return text }
function fraction(text, key,   p) {  # "5/6" -> the counts of phases, summed over the runs
  split(text, p, "/"); got[key] += p[1]; of[key] += p[2]
}
FNR == 1 { run++; section = "all" }
/^# from the second cycle on/ { section = "rec"; cyclic = 1; next }
/^# [a-z]+: profiler / { section = "tail" }
/^  [a-z]+ / && section == "all" && NF == 9 {
  arm = $1; if (!(arm in seen)) { seen[arm] = 1; order[++arms] = arm }
  add(arm " hot", $2); add(arm " cold", $3); add(arm " mib", $4); add(arm " over", $6); add(arm " pp", $7); add(arm " react", $8)
  perRun[run, arm, "hot"] = $2; perRun[run, arm, "mib"] = $4
}
/^  [a-z]+ / && section == "rec" && NF == 6 {
  arm = $1
  add(arm " rhot", $2); add(arm " rreact", $3); fraction($4, arm " started"); fraction($5, arm " inOne"); add(arm " rmib", $6)
  perRun[run, arm, "rhot"] = $2; perRun[run, arm, "rmib"] = $6
}
/^# [a-z]+: profiler .* of a core on average / {  # "# mtm: profiler 2.02% of a core ... (budget 2.00%), peak 3.66%"
  arm = substr($2, 1, length($2) - 1); v = $4; sub(/%/, "", v); add(arm " cpu", v)
  v = $NF; sub(/%/, "", v); add(arm " peak", v)
  for (i = 1; i < NF; i++) if ($i == "(budget") { budget[arm] = $(i + 1); sub(/%\),?/, "", budget[arm]) }
}
/^# predict: prediction: / {
  for (i = 1; i < NF; i++) if ($(i + 1) == "MiB" && $(i - 1) == "mispredicted") perRun[run, "miss"] = $i
}
END {
  printf "\n# placement over %d runs, each in its own boot: mean [lowest..highest] of the runs\n", run
  printf "# %-8s %21s %21s %21s %21s %21s %21s\n", "system", "hot_top", "cold_top", "migrated (MiB)", "moved/oracle", "pingpong (MiB)",
    "reaction (s)"
  for (a = 1; a <= arms; a++) {
    arm = order[a]
    printf "  %-8s %s %s %s %s %s %s\n", arm, stat(arm " hot", "%.3f"), stat(arm " cold", "%.3f"), stat(arm " mib", "%.1f"),
      stat(arm " over", "%.2f"), stat(arm " pp", "%.1f"), stat(arm " react", "%.1f")
  }
  if (cyclic) {
    printf "# from the second cycle on:\n"
    printf "# %-8s %21s %21s %14s %14s %21s\n", "system", "hot_top", "reaction (s)", "started_0.9", "0.9_in_1_intv", "migrated (MiB)"
    for (a = 1; a <= arms; a++) {
      arm = order[a]
      printf "  %-8s %s %s %14s %14s %s\n", arm, stat(arm " rhot", "%.3f"), stat(arm " rreact", "%.1f"),
        got[arm " started"] + 0 "/" of[arm " started"] + 0, got[arm " inOne"] + 0 "/" of[arm " inOne"] + 0, stat(arm " rmib", "%.1f")
    }
  }
  for (a = 1; a <= arms; a++) {
    arm = order[a]
    if ((arm " cpu") in n)
      printf "# %s: profiler %s %% of a core on average (budget %s%%), peak %s %%\n", arm, trim(stat(arm " cpu", "%.2f")),
        budget[arm], trim(stat(arm " peak", "%.2f"))
  }
  if (!("mtm" in seen) || !("predict" in seen)) exit
  # Run by run: the figures whose spread decides a comparison of the two mtm arms.
  rec = cyclic ? "r" : ""
  printf "# predictive mtm against reactive mtm, run by run%s:\n", cyclic ? " (from the second cycle on)" : ""
  printf "# %4s %14s %14s %14s %14s %14s %16s\n", "run", "mtm hot_top", "predict", "mtm MiB", "predict MiB", "bytes", "mispredicted"
  for (r = 1; r <= run; r++) {
    m = perRun[r, "mtm", rec "mib"]; p = perRun[r, "predict", rec "mib"]
    if (m > 0) { ratio = p / m; add("ratio", ratio); below += (ratio <= 1) }
    printf "  %4d %14s %14s %14s %14s %14s %12s MiB\n", r, perRun[r, "mtm", rec "hot"], perRun[r, "predict", rec "hot"], m, p,
      (m > 0 ? sprintf("%.2fx", p / m) : "-"), ((r, "miss") in perRun ? perRun[r, "miss"] : "-")
  }
  if ("ratio" in n)
    printf "# predictive mtm vs reactive mtm: bytes migrated %.2fx on average over the runs (%.2fx..%.2fx), no more than reactive's in %d of %d runs; hot_top %.3f against %.3f\n",
      sum["ratio"] / n["ratio"], lo["ratio"], hi["ratio"], below, n["ratio"], sum["predict " rec "hot"] / n["predict " rec "hot"],
      sum["mtm " rec "hot"] / n["mtm " rec "hot"]
}
