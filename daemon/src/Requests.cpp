#include "mtm/daemon/Requests.h"

#include <limits>
#include <sstream>
#include <vector>

#include "mtm/Json.h"
#include "mtm/Log.h"
#include "mtm/Parse.h"
#include "mtm/daemon/Process.h"

namespace mtm::daemon {
namespace {

constexpr const char* kUsage = "expected one of: attach PID, detach PID, status text|json, ping";

Result<int> parsePid(const std::vector<std::string>& words) {
  if (words.size() != 2) return Error("\"" + words[0] + "\" takes one pid (" + kUsage + ")");
  auto pid = parseUnsigned(words[1]);
  if (!pid || *pid == 0 || *pid > std::numeric_limits<int>::max()) return Error("\"" + words[1] + "\" is not a pid");
  return static_cast<int>(*pid);
}

Error notAllowed(int pid, uid_t owner, const Peer& peer) {
  return Error("permission denied: pid " + std::to_string(pid) + " belongs to uid " + std::to_string(owner) +
               "; uid " + std::to_string(peer.uid) + " may only steer its own processes (or run as root)", EPERM);
}

}  // namespace

Reply handleRequest(Manager& manager, const std::string& request, const Peer& peer) {
  std::istringstream in(request);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  if (words.empty()) return Error(std::string("empty request (") + kUsage + ")");
  const std::string& verb = words[0];
  // Escaped: a request is anyone's bytes, and the log is read on terminals.
  MTM_DEBUG("request uid={} pid={} {}", peer.uid, peer.pid, jsonEscape(request.substr(0, 200)));

  if (verb == "ping" && words.size() == 1) return std::string("pong\n");
  if (verb == "status") {
    if (words.size() > 2 || (words.size() == 2 && words[1] != "text" && words[1] != "json"))
      return Error("status takes text or json");
    return manager.renderStatus(words.size() == 2 && words[1] == "json" ? Format::Json : Format::Text, peer.uid);
  }
  if (verb == "attach") {
    auto pid = parsePid(words);
    if (!pid) return std::move(pid).takeError();
    auto id = readProcessIdentity(KernelFs("/"), *pid);
    if (!id) return std::move(id).takeError();
    if (!id->ownedBy(peer.uid)) {
      MTM_WARN("refused attach pid={} owner_uid={} from uid={}", *pid, id->realUid, peer.uid);
      return notAllowed(*pid, id->realUid, peer);
    }
    if (manager.manages(*pid)) return "pid " + std::to_string(*pid) + " is already managed\n";
    if (auto st = manager.attach(*pid, "socket (uid " + std::to_string(peer.uid) + ")"); !st.ok()) return std::move(st).takeError();
    return "attached pid " + std::to_string(*pid) + " (" + id->comm + ")\n";
  }
  if (verb == "detach") {
    auto pid = parsePid(words);
    if (!pid) return std::move(pid).takeError();
    auto owner = manager.ownerOf(*pid);
    if (!owner) return Error("pid " + std::to_string(*pid) + " is not managed (mtmctl status lists the managed processes)");
    if (peer.uid != 0 && *owner != peer.uid) return notAllowed(*pid, *owner, peer);
    manager.detach(*pid);
    return "detached pid " + std::to_string(*pid) + "\n";
  }
  return Error("unknown request " + jsonEscape(request.substr(0, 64)) + " (" + kUsage + ")");
}

}  // namespace mtm::daemon
