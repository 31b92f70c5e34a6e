#include "mtm/daemon/Machine.h"

#include "mtm/Log.h"
#include "mtm/Parse.h"
#include "mtm/config/ConfigLoader.h"

namespace mtm::daemon {
namespace {

constexpr uint64_t kMiB = 1ull << 20;

Cell optional(const std::optional<uint64_t>& v) { return v ? Cell(*v) : Cell(); }
Cell optional(const std::optional<int>& v) { return v ? Cell(static_cast<int64_t>(*v)) : Cell(); }

Table tierTable(const config::TierMap& map) {
  Table t({{"tier", "tier"},
           {"name", "name"},
           {"nodes", "nodes"},
           {"capacity_bytes", "capacity[MiB]", kMiB},
           {"total_bytes", "total[MiB]", kMiB},
           {"free_bytes", "free[MiB]", kMiB},
           {"kernel_reserve_bytes", "reserve[MiB]", kMiB},
           {"read_latency_ns", "latency[ns]"},
           {"read_bandwidth_mbps", "bandwidth[MB/s]"},
           {"distance", "distance"},
           {"kernel_tier", "kernel_tier"}});
  for (const auto& tier : map.tiers) {
    t.addRow({static_cast<int64_t>(tier.index), tier.name, tier.nodes, tier.capacityBytes, tier.totalBytes, tier.freeBytes,
              tier.kernelReserveBytes, optional(tier.readLatencyNs), optional(tier.readBandwidthMBps), optional(tier.minDistance),
              optional(tier.kernelTier)});
  }
  return t;
}

Table nodeTable(const Machine& m) {
  Table t({{"node", "node"},
           {"tier", "tier"},
           {"cpus", "cpus"},
           {"total_bytes", "total[MiB]", kMiB},
           {"free_bytes", "free[MiB]", kMiB},
           {"read_latency_ns", "latency[ns]"},
           {"read_bandwidth_mbps", "bandwidth[MB/s]"},
           {"distances", "distances"}});
  for (const auto& node : m.topology.nodes) {
    IntList distances;
    for (const auto& [to, d] : node.distance) distances.values.push_back(d);
    int tier = m.tiers.tierOfNode(node.id);
    t.addRow({static_cast<int64_t>(node.id), tier >= 0 ? Cell(static_cast<int64_t>(tier)) : Cell(), node.cpus, node.totalBytes,
              node.freeBytes, node.hmat ? Cell(node.hmat->readLatencyNs) : Cell(), node.hmat ? Cell(node.hmat->readBandwidthMBps) : Cell(),
              distances});
  }
  return t;
}

std::vector<std::string> allNotes(const Machine& m) {
  std::vector<std::string> notes = m.topology.notes;
  notes.insert(notes.end(), m.tiers.notes.begin(), m.tiers.notes.end());
  return notes;
}

}  // namespace

Result<Machine> inspectMachine(const KernelFs& fs, const config::Config& config) {
  auto topology = config::discoverTopology(fs);
  if (!topology) return std::move(topology).takeError().context("discovering memory tiers");
  auto tiers = config::buildTierMap(*topology, config.tiers);
  if (!tiers) return std::move(tiers).takeError();
  return Machine{std::move(*topology), std::move(*tiers)};
}

std::string renderMachine(const Machine& m, Format format) {
  if (format == Format::Csv) return tierTable(m.tiers).renderCsv();
  const auto notes = allNotes(m);
  const auto& thp = m.topology.thp;
  if (format == Format::Json) {
    JsonWriter w;
    w.beginObject();
    w.key("source").value(config::tierSourceName(m.tiers.source));
    w.key("tiers");
    tierTable(m.tiers).writeJson(w);
    w.key("nodes");
    nodeTable(m).writeJson(w);
    w.key("unmanaged_nodes").value(m.tiers.unmanagedNodes);
    w.key("thp");
    if (thp) {
      w.beginObject();
      w.key("enabled").value(thp->enabled);
      w.key("defrag").value(thp->defrag);
      w.key("shmem_enabled").value(thp->shmemEnabled);
      w.key("pmd_size_bytes").value(thp->pmdSizeBytes);
      w.endObject();
    } else {
      w.null();
    }
    w.key("notes").beginArray();
    for (const auto& n : notes) w.value(n);
    w.endArray();
    w.endObject();
    return w.str();
  }
  std::string out = "Tiers (fastest first, from " + std::string(config::tierSourceName(m.tiers.source)) + "):\n";
  out += tierTable(m.tiers).renderText();
  out += "\nNodes:\n" + nodeTable(m).renderText();
  out += "\nTransparent huge pages: ";
  out += thp ? "enabled=" + thp->enabled + " defrag=" + thp->defrag + " shmem=" + thp->shmemEnabled +
                   " size=" + formatBytes(thp->pmdSizeBytes) + "\n"
             : "not available\n";
  if (!notes.empty()) {
    out += "\nNotes:\n";
    for (const auto& n : notes) out += "  - " + n + "\n";
  }
  return out;
}

void logMachine(const Machine& m) {
  for (const auto& note : allNotes(m)) MTM_INFO("tiers note=\"{}\"", note);
  for (const auto& t : m.tiers.tiers) {
    MTM_INFO("tier index={} name={} nodes={} capacity={} free={} kernel_reserve={} latency_ns={} source={}", t.index, t.name,
             formatNodeList(t.nodes), formatBytes(t.capacityBytes), formatBytes(t.freeBytes), formatBytes(t.kernelReserveBytes),
             t.readLatencyNs ? std::to_string(*t.readLatencyNs) : "-", config::tierSourceName(m.tiers.source));
  }
}

}  // namespace mtm::daemon

namespace mtm::daemon {

Result<Machine> checkConfigFile(const std::string& path, const KernelFs& fs) {
  auto cfg = config::loadConfigFile(path);
  if (!cfg) return std::move(cfg).takeError();
  auto machine = inspectMachine(fs, *cfg);
  if (!machine) return Error(path + ": does not fit this machine: " + machine.error().message());
  return machine;
}

std::string describeCheckedConfig(const std::string& path, const Machine& machine) {
  std::string tiers;
  for (const auto& t : machine.tiers.tiers) tiers += (tiers.empty() ? "" : " > ") + formatNodeList(t.nodes);
  return path + ": ok, " + std::to_string(machine.tiers.tiers.size()) + " tiers: " + tiers + " (from " +
         config::tierSourceName(machine.tiers.source) + ")";
}

}  // namespace mtm::daemon
