#pragma once
// Requests to mtmd about the pool it owns (CXLCCL_POOL=mtmd, or mtmd:SOCKET): one line over its
// control socket; the reply is "ok\n" and a body, or "error MESSAGE", with the pool's devices
// passed alongside (SCM_RIGHTS) when asked for. A rank then maps the pool without the right to
// open its devices, and every change to the pool's table is made by mtmd.

#include <string>
#include <vector>

#include "Status.h"

namespace cxlccl {

inline constexpr const char* kDefaultDaemonSocket = "/run/mtm/mtmd.sock";

// The socket when `spec` names mtmd's pool ("mtmd", "mtmd:/path/to.sock"), else "".
std::string daemonSocketOf(const std::string& spec);

// Sends `line`; the reply's body, and the descriptors that came with it (the caller owns them).
Status daemonRequest(const std::string& socket, const std::string& line, std::string* body, std::vector<int>* fds = nullptr);

}  // namespace cxlccl
