#include "mtm/config/Topology.h"

#include <algorithm>

#include "mtm/Parse.h"
#include "mtm/config/ZoneReserve.h"

namespace mtm::config {
namespace {

constexpr const char* kNodeDir = "/sys/devices/system/node";
constexpr const char* kTierDir = "/sys/devices/virtual/memory_tiering";
constexpr const char* kThpDir = "/sys/kernel/mm/transparent_hugepage";

std::string nodePath(int id, const std::string& file) { return std::string(kNodeDir) + "/node" + std::to_string(id) + "/" + file; }

Result<uint64_t> readUnsigned(const KernelFs& fs, const std::string& path) {
  auto text = fs.read(path);
  if (!text) return std::move(text).takeError();
  auto v = parseUnsigned(*text);
  if (!v) return Error(path + ": " + v.error().message());
  return v;
}

Result<std::vector<int>> readList(const KernelFs& fs, const std::string& path) {
  auto text = fs.read(path);
  if (!text) return std::move(text).takeError();
  auto v = parseNodeList(*text);
  if (!v) return Error(path + ": " + v.error().message());
  return v;
}

std::optional<HmatAccess> readHmat(const KernelFs& fs, int id) {
  const std::string dir = nodePath(id, "access0/initiators/");
  auto rl = readUnsigned(fs, dir + "read_latency");
  auto wl = readUnsigned(fs, dir + "write_latency");
  auto rb = readUnsigned(fs, dir + "read_bandwidth");
  auto wb = readUnsigned(fs, dir + "write_bandwidth");
  if (!rl || !wl || !rb || !wb) return std::nullopt;
  return HmatAccess{*rl, *wl, *rb, *wb};
}

// Reads one node; a node whose meminfo cannot be read is an error (the node list said it exists).
Result<NumaNode> readNode(const KernelFs& fs, int id, const std::vector<int>& online, std::vector<std::string>& notes) {
  NumaNode node;
  node.id = id;
  auto cpus = readList(fs, nodePath(id, "cpulist"));
  if (cpus)
    node.cpus = *cpus;
  else
    notes.push_back("node" + std::to_string(id) + ": no cpulist (" + cpus.error().message() + "): assuming no CPUs");

  auto text = fs.read(nodePath(id, "meminfo"));
  if (!text) return std::move(text).takeError().context("reading node " + std::to_string(id));
  auto meminfo = parseNodeMeminfo(*text);
  if (!meminfo) return Error(nodePath(id, "meminfo") + ": " + meminfo.error().message());
  node.totalBytes = (*meminfo)["MemTotal"];
  node.freeBytes = (*meminfo)["MemFree"];

  auto dist = fs.read(nodePath(id, "distance"));
  auto row = dist ? parseIntRow(*dist) : Result<std::vector<int>>(dist.error());
  if (row && row->size() == online.size()) {
    // The row lists distances to the online nodes, in node order.
    for (size_t i = 0; i < online.size(); ++i) node.distance[online[i]] = (*row)[i];
  } else {
    notes.push_back("node" + std::to_string(id) + ": no usable distance row (" +
                    (row ? "expected " + std::to_string(online.size()) + " entries" : row.error().message()) + ")");
  }
  node.hmat = readHmat(fs, id);
  return node;
}

void readKernelTiers(const KernelFs& fs, Topology& topo) {
  auto names = fs.list(kTierDir);
  if (!names) {
    topo.notes.push_back(std::string("no kernel memory tiers (") + kTierDir + " missing; Linux 6.1+ has it)");
    return;
  }
  for (const auto& name : *names) {
    const std::string prefix = "memory_tier";
    if (name.rfind(prefix, 0) != 0) continue;
    auto id = parseUnsigned(std::string_view(name).substr(prefix.size()));
    auto nodes = readList(fs, std::string(kTierDir) + "/" + name + "/nodelist");
    if (!id || !nodes) {
      topo.notes.push_back("ignored " + name + ": " + (nodes ? id.error().message() : nodes.error().message()));
      continue;
    }
    if (nodes->empty()) continue;
    topo.kernelTiers[static_cast<int>(*id)] = *nodes;
    for (int n : *nodes)
      for (auto& node : topo.nodes)
        if (node.id == n) node.kernelTier = static_cast<int>(*id);
  }
}

void readThp(const KernelFs& fs, Topology& topo) {
  auto choice = [&](const std::string& file) -> std::string {
    auto text = fs.read(std::string(kThpDir) + "/" + file);
    if (!text) return "";
    auto c = parseBracketChoice(*text);
    return c ? *c : "";
  };
  ThpSettings thp;
  thp.enabled = choice("enabled");
  if (thp.enabled.empty()) {
    topo.notes.push_back(std::string("no transparent huge pages (") + kThpDir + "/enabled unreadable)");
    return;
  }
  thp.defrag = choice("defrag");
  thp.shmemEnabled = choice("shmem_enabled");
  thp.pmdSizeBytes = readUnsigned(fs, std::string(kThpDir) + "/hpage_pmd_size").valueOr(0);
  topo.thp = thp;
}

// A kernel built without NUMA has no node directory: one node 0 holding all of /proc/meminfo.
Result<Topology> singleNodeFromMeminfo(const KernelFs& fs) {
  auto text = fs.read("/proc/meminfo");
  if (!text) return std::move(text).takeError().context("discovering memory without NUMA sysfs");
  // /proc/meminfo lines lack the "Node N" prefix; add it to reuse the node parser.
  std::string prefixed;
  std::string_view t = *text;
  while (!t.empty()) {
    auto nl = t.find('\n');
    prefixed += "Node 0 " + std::string(t.substr(0, nl)) + "\n";
    t = nl == std::string_view::npos ? std::string_view{} : t.substr(nl + 1);
  }
  auto meminfo = parseNodeMeminfo(prefixed);
  if (!meminfo) return Error("/proc/meminfo: " + meminfo.error().message());
  Topology topo;
  NumaNode node;
  node.hasMemory = true;
  node.totalBytes = (*meminfo)["MemTotal"];
  node.freeBytes = (*meminfo)["MemFree"];
  node.distance[0] = 10;
  topo.nodes.push_back(node);
  topo.notes.push_back(std::string("no NUMA sysfs (") + kNodeDir + " missing): one node from /proc/meminfo");
  return topo;
}

}  // namespace

const NumaNode* Topology::node(int id) const {
  for (const auto& n : nodes)
    if (n.id == id) return &n;
  return nullptr;
}

std::vector<int> Topology::memoryNodes() const {
  std::vector<int> out;
  for (const auto& n : nodes)
    if (n.hasMemory) out.push_back(n.id);
  return out;
}

std::vector<int> Topology::cpuNodes() const {
  std::vector<int> out;
  for (const auto& n : nodes)
    if (!n.cpus.empty()) out.push_back(n.id);
  return out;
}

Result<Topology> discoverTopology(const KernelFs& fs) {
  if (!fs.exists(kNodeDir)) return singleNodeFromMeminfo(fs);
  Topology topo;
  auto online = readList(fs, std::string(kNodeDir) + "/online");
  if (!online) return std::move(online).takeError().context("discovering NUMA nodes");
  if (online->empty()) return Error(std::string(kNodeDir) + "/online: no online node");

  auto withMemory = readList(fs, std::string(kNodeDir) + "/has_memory");
  if (!withMemory)
    topo.notes.push_back("no has_memory list (" + withMemory.error().message() + "): nodes with MemTotal > 0 count as memory nodes");

  for (int id : *online) {
    auto node = readNode(fs, id, *online, topo.notes);
    if (!node) return std::move(node).takeError();
    node->hasMemory = withMemory ? std::count(withMemory->begin(), withMemory->end(), id) > 0 : node->totalBytes > 0;
    topo.nodes.push_back(std::move(*node));
  }
  if (auto reserves = readZoneReserves(fs)) {
    for (auto& node : topo.nodes) node.kernelReserveBytes = (*reserves)[node.id];
  } else {
    topo.notes.push_back("no /proc/zoneinfo (" + reserves.error().message() +
                         "): the kernel's free-memory reserve on each node is unknown");
  }
  readKernelTiers(fs, topo);
  readThp(fs, topo);
  return topo;
}

Result<uint64_t> readNodeFreeBytes(const KernelFs& fs, int node) {
  auto text = fs.read(nodePath(node, "meminfo"));
  if (!text) return std::move(text).takeError();
  auto meminfo = parseNodeMeminfo(*text);
  if (!meminfo) return Error(nodePath(node, "meminfo") + ": " + meminfo.error().message());
  return (*meminfo)["MemFree"];
}

}  // namespace mtm::config
