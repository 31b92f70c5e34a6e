#pragma once
// What the control socket's requests do to a manager, and who may make them: anyone may ping
// and read status (non-root callers see only their own processes); attach and detach need
// root or the owner of the target process (all of its real, effective and saved uids).

#include <string>

#include "mtm/daemon/ControlRequest.h"
#include "mtm/daemon/ControlSocket.h"
#include "mtm/daemon/Manager.h"

namespace mtm::daemon {

// A request other than the cxl ones (those go to CxlPoolService).
Reply handleRequest(Manager& manager, const ControlRequest& request, const Peer& peer);

}  // namespace mtm::daemon
