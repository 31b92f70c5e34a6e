#include "mtm/daemon/Process.h"

#include <algorithm>
#include <cerrno>
#include <optional>
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
  bool uids = false, memory = false, exited = false;
  std::optional<bool> kthread;
  auto value = [&](size_t keyLength) { return line.substr(std::min(line.size(), line.find_first_not_of(" \t", keyLength))); };
  while (std::getline(in, line)) {
    if (line.rfind("Name:", 0) == 0) {
      id.comm = value(5);
    } else if (line.rfind("Uid:", 0) == 0) {
      std::istringstream u(line.substr(4));
      uids = static_cast<bool>(u >> id.realUid >> id.effectiveUid >> id.savedUid);
    } else if (line.rfind("Tgid:", 0) == 0) {
      id.tgid = static_cast<int>(parseUnsigned(value(5)).valueOr(0));
    } else if (line.rfind("Kthread:", 0) == 0) {
      kthread = value(8) == "1";
    } else if (line.rfind("VmSize:", 0) == 0) {
      memory = true;
    } else if (line.rfind("State:", 0) == 0) {
      const std::string state = value(6);
      exited = !state.empty() && (state[0] == 'Z' || state[0] == 'X');
    }
  }
  if (!uids) return Error(dir + "/status: no Uid line");
  if (id.tgid == 0) id.tgid = pid;
  // Older kernels (6.1) have no Kthread line: there a live task without an address space is one.
  id.kernelThread = kthread ? *kthread : !memory && !exited;
  return id;
}

std::string readCgroup(const KernelFs& fs, int pid) {
  auto text = fs.read("proc/" + std::to_string(pid) + "/cgroup");
  if (!text) return "";
  // The unified hierarchy's line: "0::/path".
  const auto at = text->find("0::");
  if (at != 0 && (at == std::string::npos || (*text)[at - 1] != '\n')) return "";
  return text->substr(at + 3, text->find('\n', at) - at - 3);
}

Status checkManageable(const ProcessIdentity& id) {
  const std::string who = "pid " + std::to_string(id.pid) + " (" + id.comm + ")";
  if (id.kernelThread) return Error(who + " is a kernel thread: it has no user memory to manage", EINVAL);
  if (id.tgid != id.pid)
    return Error(
        who + " is a thread of process " + std::to_string(id.tgid) + ": name the process (its memory is shared by all its threads)",
        EINVAL);
  return {};
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
