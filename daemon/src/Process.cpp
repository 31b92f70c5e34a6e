#include "mtm/daemon/Process.h"

#include <cerrno>
#include <sstream>

#include "mtm/Log.h"
#include "mtm/Parse.h"

namespace mtm::daemon {

Result<ProcessIdentity> readProcessIdentity(const KernelFs& fs, int pid) {
  const std::string dir = "/proc/" + std::to_string(pid);
  auto status = fs.read(dir + "/status");
  if (!status) {
    if (!fs.exists(dir)) return Error("pid " + std::to_string(pid) + " does not exist", ESRCH);
    return std::move(status).takeError();
  }
  ProcessIdentity id;
  id.pid = pid;
  std::istringstream in(*status);
  std::string line;
  bool uids = false;
  while (std::getline(in, line)) {
    if (line.rfind("Name:", 0) == 0) {
      id.comm = line.substr(line.find_first_not_of(" \t", 5));
    } else if (line.rfind("Uid:", 0) == 0) {
      std::istringstream u(line.substr(4));
      uids = static_cast<bool>(u >> id.realUid >> id.effectiveUid >> id.savedUid);
    }
  }
  if (!uids) return Error(dir + "/status: no Uid line");
  return id;
}

std::vector<std::pair<int, std::string>> matchConfigTargets(const config::TargetsConfig& targets, const KernelFs& fs) {
  static log::RateLimit warnLimit(std::chrono::seconds(60));
  std::vector<std::pair<int, std::string>> out;
  for (int pid : targets.pids)
    if (fs.exists("/proc/" + std::to_string(pid))) out.emplace_back(pid, "config pid");
  for (const auto& cg : targets.cgroups) {
    auto procs = fs.read(cg + "/cgroup.procs");
    if (!procs) {
      unsigned held = 0;
      if (warnLimit.allow(std::chrono::steady_clock::now(), held))
        MTM_WARN("targets.cgroups: cannot read {}/cgroup.procs: {} ({} more held back)", cg, procs.error().message(), held);
      continue;
    }
    std::istringstream in(*procs);
    for (int pid; in >> pid;) out.emplace_back(pid, "cgroup " + cg);
  }
  if (!targets.commands.empty()) {
    auto names = fs.list("/proc");
    if (!names) return out;
    for (const auto& name : *names) {
      auto pid = parseUnsigned(name);
      if (!pid) continue;  // not a process directory
      auto comm = fs.read("/proc/" + name + "/comm");
      if (!comm) continue;
      std::string_view c = *comm;
      c = c.substr(0, c.find_last_not_of("\n ") + 1);  // the kernel's trailing newline
      for (const auto& want : targets.commands)
        if (c == want) out.emplace_back(static_cast<int>(*pid), "command " + want);
    }
  }
  return out;
}

}  // namespace mtm::daemon
