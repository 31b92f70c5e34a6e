#include "mtm/daemon/Requests.h"

#include "mtm/Json.h"
#include "mtm/Log.h"
#include "mtm/daemon/ControlRequest.h"
#include "mtm/daemon/Process.h"

namespace mtm::daemon {
namespace {

Error notAllowed(int pid, uid_t owner, const Peer& peer) {
  return Error("permission denied: pid " + std::to_string(pid) + " belongs to uid " + std::to_string(owner) + "; uid " +
                   std::to_string(peer.uid) + " may only steer its own processes (or run as root)",
               EPERM);
}

}  // namespace

Reply handleRequest(Manager& manager, const ControlRequest& request, const Peer& peer) {
  const int pid = request.pid;
  switch (request.verb) {
    case ControlRequest::Verb::Ping:
      return std::string("pong\n");
    case ControlRequest::Verb::Status:
      return manager.renderStatus(request.format, peer.uid);
    case ControlRequest::Verb::Attach: {
      auto id = readProcessIdentity(KernelFs("/"), pid);
      if (!id) return std::move(id).takeError();
      if (!id->ownedBy(peer.uid)) {
        MTM_WARN("refused attach pid={} owner_uid={} from uid={}", pid, id->realUid, peer.uid);
        return notAllowed(pid, id->realUid, peer);
      }
      if (manager.manages(pid)) return "pid " + std::to_string(pid) + " is already managed\n";
      if (auto st = manager.attach(pid, "socket (uid " + std::to_string(peer.uid) + ")"); !st.ok()) return std::move(st).takeError();
      return "attached pid " + std::to_string(pid) + " (" + id->comm + ")\n";
    }
    case ControlRequest::Verb::Detach: {
      auto owner = manager.ownerOf(pid);
      if (!owner) return Error("pid " + std::to_string(pid) + " is not managed (mtmctl status lists the managed processes)");
      if (peer.uid != 0 && *owner != peer.uid) return notAllowed(pid, *owner, peer);
      manager.detach(pid);
      return "detached pid " + std::to_string(pid) + "\n";
    }
    case ControlRequest::Verb::HintPhase:
    case ControlRequest::Verb::HintGroup: {
      auto owner = manager.ownerOf(pid);
      if (!owner) return Error("pid " + std::to_string(pid) + " is not managed (mtmctl status lists the managed processes)");
      if (peer.uid != 0 && *owner != peer.uid) return notAllowed(pid, *owner, peer);
      const bool phase = request.verb == ControlRequest::Verb::HintPhase;
      if (auto st = manager.hint({pid, phase, request.phase, request.ranges}); !st.ok()) return std::move(st).takeError();
      if (phase) return "hint: pid " + std::to_string(pid) + " begins phase " + std::to_string(request.phase) + "\n";
      return "hint: pid " + std::to_string(pid) + " uses " + std::to_string(request.ranges.size()) + " range(s), " +
             std::to_string(bytesOf(request.ranges) >> 20) + " MiB, together\n";
    }
    case ControlRequest::Verb::CxlPool:
    case ControlRequest::Verb::CxlAlloc:
    case ControlRequest::Verb::CxlFree:
      break;
  }
  return Error("a cxl request reached the manager");
}

}  // namespace mtm::daemon
