// How mtmctl status and mtmctl run show what the manager holds: tiers and targets as a table
// or JSON, one line of residency, failures by errno.
#include <algorithm>

#include "mtm/Json.h"
#include "mtm/Parse.h"
#include "mtm/daemon/Manager.h"
#include "mtm/migrate/Mover.h"

namespace mtm::daemon {

std::string describeFailures(const std::map<int, uint64_t>& failedByErrno) {
  std::vector<std::pair<uint64_t, int>> byCount;
  for (const auto& [err, pages] : failedByErrno) byCount.emplace_back(pages, err);
  std::sort(byCount.rbegin(), byCount.rend());
  std::string out;
  for (const auto& [pages, err] : byCount) out += (out.empty() ? "" : ", ") + errnoName(err) + " " + std::to_string(pages);
  return out;
}

std::string describePrediction(const policy::PredictionReport& p) {
  return fmt::format(
      "{} group(s), {} active, {} transition(s); {} prediction(s), {} hit(s), {} miss(es); predicted {:.1f} MiB, "
      "mispredicted {:.1f} MiB",
      p.groups, p.activeGroups, p.transitions, p.predictions, p.hits, p.misses, double(p.predictedBytes) / double(1 << 20),
      double(p.mispredictedBytes) / double(1 << 20));
}

std::vector<uint64_t> Manager::tierTotals(uid_t viewer) const {
  std::vector<uint64_t> perTier(machine_.tiers.tiers.size(), 0);
  for (const auto& [pid, t] : targets_)
    if (viewer == 0 || t.uid == viewer)
      for (size_t i = 0; i < perTier.size() && i < t.tierBytes.size(); ++i) perTier[i] += t.tierBytes[i];
  return perTier;
}

std::string Manager::residencyLine() const {
  const auto perTier = tierTotals(0);
  std::string line = fmt::format("t={:.0f}s", last_.seconds);
  for (size_t i = 0; i < perTier.size(); ++i) line += fmt::format(" {}={}", machine_.tiers.tiers[i].name, formatBytes(perTier[i]));
  return line;
}

std::string Manager::renderStatus(Format format, uid_t viewer) const {
  Table tiers({{"tier", "tier"},
               {"name", "name"},
               {"nodes", "nodes"},
               {"capacity_bytes", "capacity[MiB]", 1 << 20},
               {"free_bytes", "free[MiB]", 1 << 20},
               {"managed_bytes", "managed[MiB]", 1 << 20},
               {"promoted_in_pages", "promoted_in"},
               {"demoted_in_pages", "demoted_in"}});
  const auto managed = tierTotals(viewer);
  for (const auto& t : machine_.tiers.tiers)
    tiers.addRow({int64_t{t.index}, t.name, t.nodes, t.capacityBytes, t.freeBytes, managed[t.index], tierStats_[t.index].promotedInPages,
                  tierStats_[t.index].demotedInPages});

  std::vector<Column> cols{{"pid", "pid"}, {"comm", "comm"}, {"uid", "uid"}, {"origin", "origin"}, {"hot_bytes", "hot[MiB]", 1 << 20}};
  for (const auto& t : machine_.tiers.tiers) cols.push_back({t.name + "_bytes", t.name + "[MiB]", 1 << 20});
  for (Column c : {Column{"promoted_pages", "promoted"}, Column{"demoted_pages", "demoted"}, Column{"pingpong_pages", "pingpong"},
                   Column{"failed_pages", "failed"}, Column{"failed_why", "why"}})
    cols.push_back(c);
  Table targets(cols);
  for (const auto& [pid, t] : targets_) {
    if (viewer != 0 && t.uid != viewer) continue;
    std::vector<Cell> row{int64_t{pid}, t.comm, uint64_t{t.uid}, t.origin, t.hotBytes};
    for (size_t i = 0; i < machine_.tiers.tiers.size(); ++i) row.emplace_back(i < t.tierBytes.size() ? t.tierBytes[i] : 0);
    for (uint64_t v : {t.promotedPages, t.demotedPages, t.pingPongPages, t.failedPages}) row.emplace_back(v);
    const std::string why = describeFailures(t.failedByErrno);
    row.emplace_back(why.empty() ? Cell() : Cell(why));
    targets.addRow(std::move(row));
  }
  const double cpu = lastReport_.profilerCpu;
  if (format == Format::Json) {
    JsonWriter w;
    w.beginObject();
    w.key("policy").value(config_.policy.name).key("mover").value(config_.migration.mover);
    w.key("interval").value(last_.interval).key("seconds").value(last_.seconds);
    w.key("profiler_cpu").value(cpu).key("profiler_checks").value(last_.checks);
    w.key("dry_run").value(config_.migration.dryRun);
    w.key("last_promoted_pages").value(lastMoves_.promotedPages).key("last_demoted_pages").value(lastMoves_.demotedPages);
    w.key("moves_in_flight").value(worker_.busy());
    if (config_.policy.predict.mode == "on") {
      const auto& p = prediction_;
      w.key("prediction").beginObject();
      w.key("groups").value(p.groups).key("active_groups").value(p.activeGroups).key("transitions").value(p.transitions);
      w.key("predictions").value(p.predictions).key("hits").value(p.hits).key("misses").value(p.misses);
      w.key("predicted_bytes").value(p.predictedBytes).key("mispredicted_bytes").value(p.mispredictedBytes);
      w.endObject();
    }
    w.key("tiers");
    tiers.writeJson(w);
    w.key("targets");
    targets.writeJson(w);
    w.endObject();
    return w.str();
  }
  const double mib = double(kPageSize) / double(1 << 20);
  std::string out = fmt::format(
      "policy {}{}, mover {}, interval {} ({:.0f} s), profiler {:.2f}% of one core, {} target(s)\n"
      "last moves: promoted {:.1f} MiB, demoted {:.1f} MiB, failed {} pages{}\n\n",
      config_.policy.name, config_.migration.dryRun ? " (dry run)" : "", config_.migration.mover, last_.interval, last_.seconds, cpu * 100,
      targets.rowCount(), double(lastMoves_.promotedPages) * mib, double(lastMoves_.demotedPages) * mib, lastMoves_.failedPages,
      worker_.busy() ? "; more moving now" : "");
  if (config_.policy.predict.mode == "on") out += "prediction: " + describePrediction(prediction_) + "\n\n";
  out += tiers.renderText() + "\n";
  out += targets.rowCount() ? targets.renderText() : "no managed processes\n";
  return out;
}

}  // namespace mtm::daemon
